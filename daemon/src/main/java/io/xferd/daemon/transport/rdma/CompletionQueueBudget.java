package io.xferd.daemon.transport.rdma;

/**
 * Keeps the send queues of the QPs sharing one completion queue within its size. Every work request is signaled,
 * so QPs that can hold more work requests than the CQ has entries can overrun it, and an overrun CQ
 * ({@code IBV_EVENT_CQ_ERR}) puts every QP on it in ERR: a QP is refused instead. Control path; any thread.
 */
final class CompletionQueueBudget
{
    private final String device;
    private final int entries;
    private int reserved;

    /**
     * @param entries the CQ's actual size ({@code ibv_cq.cqe}, at least what was asked for).
     */
    CompletionQueueBudget(final String device, final int entries)
    {
        this.device = device;
        this.entries = entries;
    }

    /**
     * @throws RdmaConnectException when {@code sendQueueDepth} more would exceed the CQ.
     */
    synchronized void reserve(final int sendQueueDepth)
    {
        if (sendQueueDepth > entries - reserved)
        {
            throw new RdmaConnectException("RDMA device " + device + ": a QP of " + sendQueueDepth +
                " send work requests does not fit its completion queue of " + entries + " entries (" + reserved +
                " taken by the QPs open): too many peers or connections_per_peer");
        }
        reserved += sendQueueDepth;
    }

    synchronized void release(final int sendQueueDepth)
    {
        reserved -= sendQueueDepth;
    }

    synchronized int reserved()
    {
        return reserved;
    }
}
