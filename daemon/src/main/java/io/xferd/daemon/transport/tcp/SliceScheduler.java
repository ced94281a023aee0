package io.xferd.daemon.transport.tcp;

/**
 * The order in which one connection sends the slices queued on it, a slice at a time: per flow (a client and a trace
 * id: one prompt's KV cache, when the client gives each prompt its trace id), a flow that has been sent less than
 * {@link #HEAD_START_BYTES} goes before those sent more, and among those the smallest so far goes next, counting
 * what it has been sent on this connection and what it has queued (ties to the flow that came first); flows past
 * their head start go oldest first. Every {@link #AGING_PERIOD}th slice goes to the flow that has waited longest
 * since it was last served, so that no flow starves while others keep coming. A short prompt that arrives behind a
 * long one under way is sent before the rest of the long one, a long one that arrives behind a short one waits for
 * little more than what the short one has left, and a long one that arrives behind another long one takes only its
 * head start before the first one finishes; within a flow, slices keep their order.
 * <p>
 * Why oldest first beyond the head start: ranking every flow by its size so far made a long prompt that arrived
 * behind another long one go before the rest of it, and the first one's tail then waited for nearly all of the
 * second (both took twice the wire time of one). Which of two long prompts goes first does not change when the
 * second ends; letting the first one finish takes one of them from twice to once the wire time.
 * <p>
 * Why what a flow was sent counts, not only what it has queued: a long prompt's requests reach the connection a few
 * at a time whenever intake runs behind the wire (a loaded host, a client still submitting), so its queue alone can
 * look shorter than a short prompt queued whole, and the long one would then keep the short one waiting to its end.
 * What a flow was sent is remembered while its queue runs dry between arrivals; it is forgotten once others have been
 * sent {@link #FORGET_AFTER_BYTES} meanwhile, when the connection goes idle ({@link #forgetIdleFlows()}), or when its
 * place is needed for a new flow, so that a client that sent much long ago is not held back for it now.
 * <p>
 * Slices are linked through {@link Slice#nextQueued}: nothing is allocated. Up to {@link #MAX_FLOWS} flows are told
 * apart; beyond that, while all of them have slices queued, new flows share one queue. The sender thread's alone (no
 * locks).
 */
final class SliceScheduler
{
    static final int MAX_FLOWS = 64;
    /**
     * One slice in this many goes to the flow that has waited longest, whatever its size: enough that nothing starves,
     * rare enough that a short prompt behind a long one loses little (1 in 8 made a 1K-token prompt's 56 slices on a
     * connection take 64 slice times instead of 57).
     */
    static final int AGING_PERIOD = 32;
    /**
     * A flow with nothing queued keeps what it was sent until others have been sent this much: far more than a
     * long prompt's queue runs dry for while intake catches up, and a few tens of milliseconds of the wire.
     */
    static final long FORGET_AFTER_BYTES = 64L << 20;
    /**
     * What a flow is sent on a connection before it queues oldest first: a 1K-token prompt of a 7B model (56 MiB)
     * over two connections fits (a short prompt behind a long one goes first whole), and a long prompt arriving behind
     * another long one delays it by this much per connection (14 % of an 8K-token prompt over two).
     */
    static final long HEAD_START_BYTES = 32L << 20;

    private final int[] slots = new int[MAX_FLOWS];
    private final long[] traceIds = new long[MAX_FLOWS];
    private final long[] bytesQueued = new long[MAX_FLOWS];
    private final long[] bytesSent = new long[MAX_FLOWS];
    private final long[] lastServed = new long[MAX_FLOWS];
    private final long[] arrivals = new long[MAX_FLOWS];
    // totalSent when the flow's queue ran dry (meaningful while its head is null)
    private final long[] drySince = new long[MAX_FLOWS];
    private final Slice[] heads = new Slice[MAX_FLOWS];
    private final Slice[] tails = new Slice[MAX_FLOWS];
    private int flows;
    private int queued;
    private long picks;
    private long arrivalCount;
    private long totalSent;

    /**
     * Queue a slice behind the others of its flow.
     */
    void add(final Slice slice)
    {
        final RemoteTransfer transfer = slice.transfer;
        final int slot = transfer.submitter == null ? -1 : transfer.submitter.slot();
        final long traceId = transfer.traceId;
        int flow = 0;
        while (flow < flows && (slots[flow] != slot || traceIds[flow] != traceId))
        {
            flow++;
        }
        if (flow == flows)
        {
            flow = flows < MAX_FLOWS ? flows++ : driestFlow();
            if (flow < 0)
            {
                flow = MAX_FLOWS - 1; // every flow has slices queued: share the last one's queue
            }
            else
            {
                slots[flow] = slot;
                traceIds[flow] = traceId;
                begin(flow);
            }
        }
        else if (heads[flow] == null && totalSent - drySince[flow] >= FORGET_AFTER_BYTES)
        {
            begin(flow); // dry while others were sent much: a new start, not the rest of what it sent before
        }
        slice.nextQueued = null;
        if (heads[flow] == null)
        {
            heads[flow] = slice;
        }
        else
        {
            tails[flow].nextQueued = slice;
        }
        tails[flow] = slice;
        bytesQueued[flow] += slice.length;
        queued++;
    }

    /**
     * @return the next slice to send, or null when none is queued.
     */
    Slice poll()
    {
        if (queued == 0)
        {
            return null;
        }
        final boolean aging = ++picks % AGING_PERIOD == 0;
        int next = -1;
        for (int flow = 0; flow < flows; flow++)
        {
            if (heads[flow] != null &&
                (next < 0 || (aging ? lastServed[flow] < lastServed[next] : isSmaller(flow, next))))
            {
                next = flow;
            }
        }
        final Slice slice = heads[next];
        heads[next] = slice.nextQueued;
        slice.nextQueued = null;
        queued--;
        bytesQueued[next] -= slice.length;
        bytesSent[next] += slice.length;
        totalSent += slice.length;
        lastServed[next] = picks;
        if (heads[next] == null)
        {
            tails[next] = null;
            drySince[next] = totalSent;
            if (traceIds[next] == 0)
            {
                // no trace id: every request of the client is this one flow, for as long as the client lives; what
                // it was sent is no prompt's size, and remembering it would put the client behind every newcomer
                bytesSent[next] = 0;
            }
        }
        return slice;
    }

    /**
     * The connection has nothing queued and nothing to do for a while: forget every flow, so that the next ones start
     * afresh.
     */
    void forgetIdleFlows()
    {
        for (int flow = flows - 1; flow >= 0; flow--)
        {
            if (heads[flow] == null)
            {
                removeDry(flow);
            }
        }
    }

    boolean isEmpty()
    {
        return queued == 0;
    }

    int size()
    {
        return queued;
    }

    /**
     * @return flows told apart now, those with nothing queued whose sent bytes are remembered included (tests).
     */
    int flows()
    {
        return flows;
    }

    private boolean isSmaller(final int flow, final int than)
    {
        final boolean young = bytesSent[flow] < HEAD_START_BYTES;
        if (young != bytesSent[than] < HEAD_START_BYTES)
        {
            return young;
        }
        final long size = bytesSent[flow] + bytesQueued[flow];
        final long other = bytesSent[than] + bytesQueued[than];
        return young && size != other ? size < other : arrivals[flow] < arrivals[than];
    }

    private void begin(final int flow)
    {
        bytesQueued[flow] = 0;
        bytesSent[flow] = 0;
        lastServed[flow] = picks;
        arrivals[flow] = ++arrivalCount;
    }

    /**
     * @return the flow with nothing queued that ran dry longest ago, or -1 when every flow has slices queued.
     */
    private int driestFlow()
    {
        int driest = -1;
        for (int flow = 0; flow < flows; flow++)
        {
            if (heads[flow] == null && (driest < 0 || drySince[flow] < drySince[driest]))
            {
                driest = flow;
            }
        }
        return driest;
    }

    private void removeDry(final int flow)
    {
        // ties go by arrival number, not by place, so the last flow may simply take this one's place
        final int last = flows - 1;
        slots[flow] = slots[last];
        traceIds[flow] = traceIds[last];
        bytesQueued[flow] = bytesQueued[last];
        bytesSent[flow] = bytesSent[last];
        lastServed[flow] = lastServed[last];
        arrivals[flow] = arrivals[last];
        drySince[flow] = drySince[last];
        heads[flow] = heads[last];
        tails[flow] = tails[last];
        heads[last] = null;
        tails[last] = null;
        flows = last;
    }
}
