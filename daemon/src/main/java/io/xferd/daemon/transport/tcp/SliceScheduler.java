package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.session.ClientSession;

/**
 * The order in which one connection sends the slices queued on it, a slice at a time. Per flow (a client and a trace
 * id: one prompt's KV cache, when the client gives each prompt its trace id) the scheduler knows its size so far (what
 * it has been sent on this connection and what it has queued) and its arrival number. Of two flows, the newer goes
 * first while its size so far is at most a {@link #SHORTER_FACTOR}th of the older one's, and otherwise the older goes
 * first; a newer flow of at most {@link #SHORT_BYTES} also goes before an older one past that and 5/4 its size. Every
 * {@link #AGING_PERIOD}th slice goes to the flow that has waited longest since it was last served, so that
 * no flow starves while others keep coming. A short prompt that arrives behind a long one under way is sent before the
 * rest of the long one (once the long one is four times its size, or 5/4 when the short one is short), a long one that
 * arrives behind a short one waits for what the short one has left, and a long one that arrives behind another long
 * one takes at most a {@link #SHORTER_FACTOR}th of the first's size (or {@link #SHORT_BYTES}) before the first
 * finishes; within a flow, slices keep their order.
 * <p>
 * Why the older first between flows of like size: ranking every flow by its size so far made a long prompt that
 * arrived behind another long one go before the rest of it, and the first one's tail then waited for nearly all of the
 * second (both took twice the wire time of one). Which of two long prompts goes first does not change when the second
 * ends; letting the first one finish takes one of them from twice to once the wire time.
 * <p>
 * Why a flow's place does not last: a flow's arrival number is renewed each time it has been sent another
 * {@link #RENEW_AFTER_BYTES}, and when a client without trace ids (all its requests one flow for its life) runs
 * dry. A flow that never ends (such a client streaming, one reused trace id, a huge prompt) would otherwise be the
 * oldest for ever and hold every later flow that is not much shorter to the aging slices; with the renewal it takes
 * turns with them a quantum at a time.
 * <p>
 * Why what a flow was sent counts, not only what it has queued: a long prompt's requests reach the connection a few
 * at a time whenever intake runs behind the wire (a loaded host, a client still submitting), so its queue alone can
 * look shorter than a short prompt queued whole, and the long one would then keep the short one waiting to its end.
 * What a flow was sent is remembered while its queue runs dry between arrivals; it is forgotten once others have been
 * sent {@link #FORGET_AFTER_BYTES} meanwhile, when the connection goes idle ({@link #forgetIdleFlows()}), or when its
 * place is needed for a new flow, so that a client that sent much long ago is not held back for it now.
 * <p>
 * Slices are linked through {@link Slice#nextQueued}: nothing is allocated. Up to {@link #MAX_FLOWS} flows are told
 * apart. A client takes a place for a new flow only while it has fewer than {@link #MAX_FLOWS_PER_CLIENT} and more
 * places are free (no slices queued) than it has busy: one client, or four sessions of one user, cannot busy every
 * place, so another client's new prompt finds one instead of a queue it shares with them. It is no hard reserve:
 * clients one after another take 16, 16, 16, 8, 4, 2, 1 and 1 places, so eight busy clients can busy all 64, and a
 * ninth then shares a flow. A trace id that finds no place joins its client's newest busy flow that hosts nobody (else
 * any flow that hosts nobody, else the newest), which then hosts every flowless trace id of that client while slices
 * of them are queued in it (counted, so the mark goes as soon as their last slice is sent, even while the host's own
 * slices keep coming): a prompt's slices never sit in two flows (a place of its own, taken once one is free, would
 * send its later slices before the earlier ones still queued in the host, and the prompt ends with its last slice).
 * The sender thread's alone (no locks); an add scans the flows once (twice for a trace id without a flow), a poll
 * usually twice (once more per shorter newer flow it moves to).
 * <p>
 * Why {@link #SHORT_BYTES} is fixed: it only covers the time in which a long prompt under way, its requests reaching
 * the connection a few at a time, is not yet {@link #SHORTER_FACTOR} times a short one's size. A larger model's short
 * prompt (a 70B model's 1K tokens are 160 MiB a connection) is past it and goes first once the long one's size so far
 * is four times its own: at once when the long one was queued whole, otherwise when intake has queued that much of
 * it. Nothing the scheduler knows would size it better: the window counts bytes in flight (4 MiB), not a prompt's
 * size, and a bound taken from the flow sizes seen would be set by whatever mix of prompts (or a client's choice of
 * trace ids) came last.
 */
final class SliceScheduler
{
    static final int MAX_FLOWS = 64;
    /**
     * Flows of one client told apart: a quarter of them. A client also takes a place only while more are free than it
     * has busy (see the class comment), so a few clients of one user do not take every place either.
     */
    static final int MAX_FLOWS_PER_CLIENT = MAX_FLOWS / 4;
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
     * A newer flow goes before an older one while its size so far is at most this fraction of the older one's: a
     * 1K-token prompt behind an 8K one (an eighth) goes first whole, and a long prompt arriving behind another long one
     * delays it by at most a quarter of its size.
     */
    static final int SHORTER_FACTOR = 4;
    /**
     * A newer flow of at most this size also goes before an older one past it and at least 5/4 of its size: a
     * prompt's requests reach the connection a few at a time, so a long one that started a few milliseconds earlier
     * may not yet be four times a short one's size, and the short one (a 1K-token prompt of a 7B model over two
     * connections is 28 MiB) would wait behind it until it is. Between flows both under it, or of like size, the older
     * goes first.
     */
    static final long SHORT_BYTES = 32L << 20;
    /**
     * A flow's arrival number is renewed each time it has been sent this much on the connection: an 8K-token prompt of
     * a 7B model over two connections (224 MiB each) keeps its place to its end, and a flow that never ends takes
     * turns with later long ones by this much.
     */
    static final long RENEW_AFTER_BYTES = 256L << 20;
    // a client is its session's slot and generation (a slot is reused while a departed session's slices are queued);
    // -1 is requests without a submitter, and no session's key has all of its low 32 bits set
    private static final long NO_SUBMITTER = -1;
    private static final long NO_GUESTS = -2;

    private final long[] clients = new long[MAX_FLOWS];
    private final long[] traceIds = new long[MAX_FLOWS];
    private final long[] bytesQueued = new long[MAX_FLOWS];
    private final long[] bytesSent = new long[MAX_FLOWS];
    private final long[] lastServed = new long[MAX_FLOWS];
    private final long[] arrivals = new long[MAX_FLOWS];
    // totalSent when the flow's queue ran dry (meaningful while its head is null)
    private final long[] drySince = new long[MAX_FLOWS];
    // the client whose trace ids without a flow of their own join this flow while slices of them are queued in it
    private final long[] guestClients = new long[MAX_FLOWS];
    // slices queued in the flow that are not its own (a guest's): the guest mark goes when none is left
    private final int[] guestQueued = new int[MAX_FLOWS];
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
        final long client = clientOf(transfer);
        final long traceId = transfer.traceId;
        int flow = -1;
        for (int f = 0; f < flows; f++)
        {
            if (traceIds[f] == traceId && clients[f] == client)
            {
                flow = f;
                break;
            }
        }
        if (flow < 0)
        {
            flow = flowFor(client, traceId);
        }
        else if (heads[flow] == null && totalSent - drySince[flow] >= FORGET_AFTER_BYTES)
        {
            begin(flow); // dry while others were sent much: a new start, not the rest of what it sent before
        }
        if (clients[flow] != client || traceIds[flow] != traceId)
        {
            guestQueued[flow]++;
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
     * @return the flow a trace id without one of its own joins: a new one in a place (see the class comment), or the
     * flow that hosts the client's flowless trace ids.
     */
    private int flowFor(final long client, final long traceId)
    {
        int busy = 0;
        int guestFlow = -1;
        int own = 0;
        int ownBusy = 0;
        int ownNewestUnhosted = -1;
        int ownDriest = -1;
        for (int f = 0; f < flows; f++)
        {
            final boolean hasQueued = heads[f] != null;
            if (hasQueued)
            {
                busy++;
                if (guestClients[f] == client)
                {
                    guestFlow = f;
                }
            }
            if (clients[f] == client)
            {
                own++;
                if (!hasQueued)
                {
                    if (ownDriest < 0 || drySince[f] < drySince[ownDriest])
                    {
                        ownDriest = f;
                    }
                }
                else
                {
                    ownBusy++;
                    if (guestClients[f] == NO_GUESTS &&
                        (ownNewestUnhosted < 0 || arrivals[f] > arrivals[ownNewestUnhosted]))
                    {
                        ownNewestUnhosted = f;
                    }
                }
            }
        }
        if (guestFlow >= 0)
        {
            // the client's flowless trace ids share this queue while slices of them are in it: a place of its own now
            // would send a prompt's later slices before those
            return guestFlow;
        }
        // a client takes a place only while more are free than it has busy: one client, or a few sessions of one
        // user, cannot busy every place (eight clients can: see the class comment)
        final int place = MAX_FLOWS - busy <= ownBusy ? -1 :
            own < MAX_FLOWS_PER_CLIENT ? (flows < MAX_FLOWS ? flows++ : driestFlow()) : ownDriest;
        if (place >= 0)
        {
            clients[place] = client;
            traceIds[place] = traceId;
            begin(place);
            return place;
        }
        // no place for it: its own newest busy flow that hosts nobody hosts the client's flowless trace ids while
        // slices of them are queued there; else another flow, one that hosts nobody if there is one (every place is
        // busy): a mark another client holds is taken over only when every flow has one
        final int host = ownNewestUnhosted >= 0 ? ownNewestUnhosted : foreignHost();
        guestClients[host] = client;
        return host;
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
        final int next = ++picks % AGING_PERIOD == 0 ? longestWaiting() : shortestBehindOldest();
        final Slice slice = heads[next];
        final RemoteTransfer transfer = slice.transfer;
        if (clientOf(transfer) != clients[next] ||
            transfer.traceId != traceIds[next])
        {
            if (--guestQueued[next] == 0)
            {
                guestClients[next] = NO_GUESTS; // nothing of its guests queued: each may take a place of its own now
            }
        }
        heads[next] = slice.nextQueued;
        slice.nextQueued = null;
        queued--;
        bytesQueued[next] -= slice.length;
        final long sentBefore = bytesSent[next];
        bytesSent[next] = sentBefore + slice.length;
        if (bytesSent[next] / RENEW_AFTER_BYTES != sentBefore / RENEW_AFTER_BYTES)
        {
            arrivals[next] = ++arrivalCount; // another quantum sent: behind the flows that came meanwhile
        }
        totalSent += slice.length;
        lastServed[next] = picks;
        if (heads[next] == null)
        {
            tails[next] = null;
            drySince[next] = totalSent;
            if (traceIds[next] == 0)
            {
                // no trace id: every request of the client is this one flow, for as long as the client lives; what
                // it was sent is no prompt's size, and remembering it would put the client behind every newcomer; its
                // next request is a newcomer too, not the oldest flow for ever
                bytesSent[next] = 0;
                arrivals[next] = ++arrivalCount;
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

    private static long clientOf(final RemoteTransfer transfer)
    {
        final ClientSession submitter = transfer.submitter;
        return submitter == null ? NO_SUBMITTER : (long)submitter.generation() << 32 | submitter.slot();
    }

    private int longestWaiting()
    {
        int next = -1;
        for (int flow = 0; flow < flows; flow++)
        {
            if (heads[flow] != null && (next < 0 || lastServed[flow] < lastServed[next] ||
                lastServed[flow] == lastServed[next] && arrivals[flow] < arrivals[next]))
            {
                next = flow;
            }
        }
        return next;
    }

    /**
     * The oldest flow with slices queued, unless a newer one is shorter ({@link #isShorter}): then the oldest of those,
     * and so on from it. Chosen by arrival and size only, never by a flow's place: compared two at a time the rule is
     * not transitive (a 40 MiB prompt goes before a 224 MiB one, which goes before a 100 MiB one, which goes before the
     * 40 MiB one), and a single scan's answer would depend on where the three sit.
     */
    private int shortestBehindOldest()
    {
        int next = -1;
        for (int flow = 0; flow < flows; flow++)
        {
            if (heads[flow] != null && (next < 0 || arrivals[flow] < arrivals[next]))
            {
                next = flow;
            }
        }
        while (true) // each step moves to a strictly newer flow: at most as many steps as flows, usually none or one
        {
            final long bound = bytesSent[next] + bytesQueued[next];
            int shorter = -1;
            for (int flow = 0; flow < flows; flow++)
            {
                if (heads[flow] != null && arrivals[flow] > arrivals[next] &&
                    isShorter(bytesSent[flow] + bytesQueued[flow], bound) &&
                    (shorter < 0 || arrivals[flow] < arrivals[shorter]))
                {
                    shorter = flow;
                }
            }
            if (shorter < 0)
            {
                break;
            }
            next = shorter;
        }
        return next;
    }

    private static boolean isShorter(final long size, final long olderSize)
    {
        // strictly smaller (two empty flows, a notification's, are alike: the older first), and the short clause keeps a
        // margin: between flows of like size the older goes first, whatever their size
        return size < olderSize && (size * SHORTER_FACTOR <= olderSize ||
            size <= SHORT_BYTES && olderSize > SHORT_BYTES && size * 5 <= olderSize * 4);
    }

    private void begin(final int flow)
    {
        bytesQueued[flow] = 0;
        bytesSent[flow] = 0;
        lastServed[flow] = picks;
        arrivals[flow] = ++arrivalCount;
        guestClients[flow] = NO_GUESTS;
        guestQueued[flow] = 0;
    }

    /**
     * @return the newest busy flow that hosts no client's flowless trace ids yet, or else the newest busy one: every
     * place is busy and the client has none of them, or each of its busy flows hosts another client.
     */
    private int foreignHost()
    {
        int host = -1;
        for (int flow = 0; flow < flows; flow++)
        {
            if (heads[flow] == null)
            {
                continue;
            }
            final boolean free = guestClients[flow] == NO_GUESTS;
            if (host < 0 || (free == (guestClients[host] == NO_GUESTS) ? arrivals[flow] > arrivals[host] : free))
            {
                host = flow;
            }
        }
        return host;
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
        clients[flow] = clients[last];
        traceIds[flow] = traceIds[last];
        bytesQueued[flow] = bytesQueued[last];
        bytesSent[flow] = bytesSent[last];
        lastServed[flow] = lastServed[last];
        arrivals[flow] = arrivals[last];
        drySince[flow] = drySince[last];
        guestClients[flow] = guestClients[last];
        guestQueued[flow] = guestQueued[last];
        heads[flow] = heads[last];
        tails[flow] = tails[last];
        heads[last] = null;
        tails[last] = null;
        flows = last;
    }
}
