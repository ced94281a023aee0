package io.xferd.daemon.peer;

/**
 * One piece of a {@link RemoteTransfer} on one connection: an offset and length within the request, or the
 * request's notification. Pooled; the id on the wire is {@code generation << 32 | index}, so a late answer to
 * a slice that was already failed and reused is recognised.
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
    int attempts;
    // set by the sender when a GPU WRITE's device copy failed mid-frame (the frame went out padded), read by the
    // receiver when the answer comes: the slice fails whatever the target says
    volatile boolean stagingFailed;

    Slice(final int index)
    {
        this.index = index;
    }

    long wireId()
    {
        return ((long)generation << 32) | index;
    }
}
