package io.xferd.daemon.transport.tcp;

/**
 * The order in which one connection sends the slices queued on it, a slice at a time: per flow (a client and a trace
 * id: one prompt's KV cache, when the client gives each prompt its trace id), the flow with the fewest bytes waiting
 * goes next (shortest first, ties to the flow that came first), and every {@link #AGING_PERIOD}th slice goes to the
 * flow that has waited longest since it was last served, so that no flow starves while shorter ones keep coming. A
 * short prompt that arrives behind a long one under way is sent before the rest of the long one, and a long one that
 * arrives behind a short one waits for little more than what the short one has left; within a flow, slices keep
 * their order. A flow is forgotten once it has nothing queued.
 * <p>
 * Slices are linked through {@link Slice#nextQueued}: nothing is allocated. Up to {@link #MAX_FLOWS} flows are told
 * apart; beyond that, new flows share the last one's queue. The sender thread's alone (no locks).
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

    private final int[] slots = new int[MAX_FLOWS];
    private final long[] traceIds = new long[MAX_FLOWS];
    private final long[] bytesQueued = new long[MAX_FLOWS];
    private final long[] lastServed = new long[MAX_FLOWS];
    private final Slice[] heads = new Slice[MAX_FLOWS];
    private final Slice[] tails = new Slice[MAX_FLOWS];
    private int flows;
    private int queued;
    private long picks;

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
            if (flows == MAX_FLOWS)
            {
                flow = MAX_FLOWS - 1;
            }
            else
            {
                flows++;
                slots[flow] = slot;
                traceIds[flow] = traceId;
                bytesQueued[flow] = 0;
                lastServed[flow] = picks;
            }
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
        int next = 0;
        for (int flow = 1; flow < flows; flow++)
        {
            if (aging ? lastServed[flow] < lastServed[next] : bytesQueued[flow] < bytesQueued[next])
            {
                next = flow;
            }
        }
        final Slice slice = heads[next];
        heads[next] = slice.nextQueued;
        slice.nextQueued = null;
        queued--;
        if (heads[next] == null)
        {
            remove(next);
        }
        else
        {
            bytesQueued[next] -= slice.length;
            lastServed[next] = picks;
        }
        return slice;
    }

    boolean isEmpty()
    {
        return queued == 0;
    }

    int size()
    {
        return queued;
    }

    private void remove(final int flow)
    {
        // keep the others in arrival order, so that ties go to the flow that came first
        final int last = flows - 1;
        for (int i = flow; i < last; i++)
        {
            slots[i] = slots[i + 1];
            traceIds[i] = traceIds[i + 1];
            bytesQueued[i] = bytesQueued[i + 1];
            lastServed[i] = lastServed[i + 1];
            heads[i] = heads[i + 1];
            tails[i] = tails[i + 1];
        }
        heads[last] = null;
        tails[last] = null;
        flows = last;
    }
}
