package io.xferd.daemon.transport.tcp;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which of a path's connections the next slice of a flow (a client and a trace id: one prompt) goes to: each flow's
 * slices take the connections in turn, so every connection carries an equal share of every prompt. One turn for all
 * slices would split a prompt by how its slices happen to interleave with others' (a 1K-token prompt's 112 slices
 * arriving beside an 8K one's went 49 and 63 over two connections): the prompt then finishes with its larger share,
 * while the other connection has gone back to the long prompt. Flows are told apart by a hash into
 * {@link #FLOWS} turns; two flows that share one split as unevenly as one turn for all would. Any thread.
 */
final class FlowSpread
{
    static final int FLOWS = 64;

    private final AtomicLongArray turns = new AtomicLongArray(FLOWS);

    /**
     * @param slot        the submitting client's slot (-1 for none).
     * @param traceId     the flow's trace id.
     * @param connections how many connections there are to choose from.
     * @return the index of the connection the flow's next slice goes to.
     */
    int next(final int slot, final long traceId, final int connections)
    {
        if (connections == 1)
        {
            return 0;
        }
        return (int)((turns.getAndIncrement(flowOf(slot, traceId)) & Long.MAX_VALUE) % connections);
    }

    /**
     * @return which of the {@link #FLOWS} turns the flow takes.
     */
    static int flowOf(final int slot, final long traceId)
    {
        // fold the high half in first: a multiply carries bits only upwards, and ids differing only in high bits
        // would otherwise share a turn
        long hash = ((traceId ^ (traceId >>> 32)) * 0x9E3779B97F4A7C15L) ^ (slot * 0xC2B2AE3D27D4EB4FL);
        hash ^= hash >>> 32;
        return (int)((hash ^ (hash >>> 29)) & (FLOWS - 1));
    }
}
