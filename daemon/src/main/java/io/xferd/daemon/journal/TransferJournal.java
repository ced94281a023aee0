package io.xferd.daemon.journal;

/**
 * What the data plane tells the journal about each request. Every method takes primitives only, allocates nothing
 * and never blocks: an implementation that cannot keep up drops the event and counts it. See the package docs for
 * the life of a request and the meaning of every argument.
 */
public interface TransferJournal
{
    /**
     * Name id of the peer of every local transfer ("local").
     */
    int PEER_LOCAL = 0;

    /**
     * Name id of the "NIC" of every local transfer ("shm": a copy between two shared mappings).
     */
    int NIC_SHM = 1;

    /**
     * The journal switched off: every call returns at once.
     */
    TransferJournal DISABLED = new TransferJournal()
    {
    };

    /**
     * Intake accepted a request (any data-plane thread).
     */
    default void onSubmitted(
        int clientSlot, long requestId, long traceId, int opcode, long length, long submitNanos, long intakeNanos)
    {
    }

    /**
     * A request was cut into {@code sliceCount} slices (transports that slice).
     */
    default void onSliced(int clientSlot, long requestId, long traceId, int sliceCount, long slicedNanos)
    {
    }

    /**
     * One slice went out on a NIC to a peer and was acknowledged (or failed with {@code status}).
     */
    default void onSlice(
        int clientSlot, long requestId, long traceId, int sliceIndex, int peerId, int nicId, long length,
        long sentNanos, long ackNanos, int status)
    {
    }

    /**
     * The request's completion was written to its client: status, bytes moved, and every timestamp.
     */
    default void onCompleted(
        int clientSlot, long requestId, long traceId, int opcode, int status, long length, long bytes,
        int peerId, int nicId, long submitNanos, long intakeNanos, long completeNanos)
    {
    }

    /**
     * Control plane only (allocates): the id that stands for a peer ("host:port") or NIC name ("mlx5_0", "eth0")
     * in {@link #onSlice} and {@link #onCompleted}; the same name always gets the same id.
     */
    default int nameId(final String name)
    {
        return JournalNames.wellKnownId(name);
    }
}
