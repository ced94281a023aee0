package io.xferd.daemon.transport.rdma;

/**
 * One reliable-connected QP as the transport uses it: what to tell the peer, connecting to what the peer told,
 * and posting signaled RDMA READ/WRITE work requests. Posting happens on the {@link RdmaAgent}'s thread only.
 */
public interface RdmaQueuePair extends AutoCloseable
{
    /**
     * @return this QP's endpoint for the handshake (its NIC name is the device's).
     */
    QpEndpoint local();

    /**
     * RESET -> INIT -> RTR -> RTS towards {@code remote}.
     *
     * @throws RdmaConnectException naming the transition that failed.
     */
    void connect(QpEndpoint remote);

    /**
     * Post one signaled RDMA READ ({@code read}) or WRITE of {@code length} bytes between local {@code localAddress}
     * ({@code lkey}) and the peer's {@code remoteAddress} ({@code rkey}); its completion carries {@code wrId}.
     * Allocation-free.
     *
     * @return false when the send queue refused it (the caller fails the slice).
     */
    boolean post(boolean read, long wrId, long localAddress, int length, int lkey, long remoteAddress, int rkey);

    /**
     * Any state -> ERR: the NIC stops working on this QP and completes what is posted with
     * {@code IBV_WC_WR_FLUSH_ERR}. Used when its work can no longer be trusted (overdue), so that no late RDMA
     * READ lands in a buffer whose request was already answered. Never throws; the QP is never used again.
     */
    void abort();

    @Override
    void close();
}
