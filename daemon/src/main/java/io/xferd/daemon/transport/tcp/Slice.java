package io.xferd.daemon.transport.tcp;

/**
 * One piece of a {@link RemoteTransfer} on one connection: an offset and length within the request, or the
 * request's notification. Pooled; the id on the wire is its sequence number on the connection it is in flight on
 * ({@link InFlightSlices}), so a late answer to a slice that was already failed and reused finds nothing.
 */
final class Slice
{
    static final int DATA = 0;
    static final int NOTIFY = 1;

    final int index;
    int generation;
    int kind;
    RemoteTransfer transfer;
    long offset;
    long length;
    long sentNanos;
    /** Its id on the wire while in flight on a connection (set by {@link InFlightSlices#add}). */
    long inFlightId;
    int attempts;
    /** The next slice of its flow while it waits in a connection's {@link SliceScheduler}. */
    Slice nextQueued;
    // set by the sender when a staged WRITE's copy (GPU or process memory) failed mid-frame (the frame went out
    // padded), read by the receiver when the answer comes: the slice fails with this status whatever the target says
    volatile int stagingFailure;

    Slice(final int index)
    {
        this.index = index;
    }
}
