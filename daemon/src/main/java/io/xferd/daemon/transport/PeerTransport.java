package io.xferd.daemon.transport;

import io.xferd.daemon.journal.TransferJournal;

import java.util.function.Consumer;

/**
 * What the data plane and the control plane need from the transport that moves bytes to and from other daemons
 * (TCP or RDMA): open a peer's segment, start a remote request, report per-path state. Which one runs is chosen
 * once, at start, by {@link io.xferd.daemon.transport.TransportSelector}; nothing else knows.
 */
public interface PeerTransport extends AutoCloseable
{
    /**
     * @return the transport's name as {@code xferd status} shows it ("tcp", "rdma").
     */
    String name();

    /**
     * Where remote requests' slices and completions are journaled (set before the first peer is opened).
     */
    void journal(TransferJournal journal);

    RemoteSegments remoteSegments();

    /**
     * Start a remote request. On {@link io.xferd.ipc.TransferStatus#OK} the transport owns the submitter's borrow
     * and the local region's borrow until it writes the completion (counted into the request's batch, if it has
     * one, which answers the client once for the whole SUBMIT_BATCH); on any other status nothing was taken.
     * The transport copies what it keeps: the caller may refill {@code request} as soon as this returns.
     * Allocation-free.
     */
    int submit(RemoteRequest request);

    /**
     * Open the segment {@code segmentName} of the daemon at {@code host:port}, off the caller's thread; the answer
     * (a handle as a Long, or an error message as a String) goes to {@code onResult} on a transport thread.
     */
    void openAsync(String peerAddress, String segmentName, Consumer<Object> onResult);

    /**
     * @return whether a local GPU range can take part in a remote request; RDMA would need GPUDirect, which this
     * build does not have.
     */
    default boolean carriesDeviceMemory()
    {
        return false;
    }

    /**
     * @return whether a local process-memory range (reached with process_vm_readv/writev) can take part in a remote
     * request; RDMA cannot register another process's memory with the NIC.
     */
    default boolean carriesProcessMemory()
    {
        return false;
    }

    /**
     * @return whether {@link #submit} answers each of a request's {@link RemoteRequest#members()} (intake merges
     * adjacent requests only for a transport that does).
     */
    default boolean carriesCoalescedRequests()
    {
        return false;
    }

    /**
     * @return the requests in flight in this transport that need nothing more from the data plane's threads until
     * their completion, which the transport writes itself: while only such requests are in flight, intake may sleep
     * on its clients' doorbells. 0 for a transport whose requests the data plane polls (RDMA's completion queue).
     */
    default long requestsAnsweredOnItsOwn()
    {
        return 0;
    }

    @Override
    void close();
}
