package io.xferd.daemon.transport.rdma;

/**
 * One posted work request: a slice of a request on one QP of one path. Pooled; its work request id is
 * {@code generation << 32 | index}, so a completion that arrives after its request timed out and the slice was
 * reused is recognised and dropped.
 */
final class RdmaSlice
{
    final int index;
    int generation;
    RdmaRequest request;
    RdmaPath path;
    int qp;
    int sliceIndex;
    long length;
    long postedNanos;

    RdmaSlice(final int index)
    {
        this.index = index;
    }

    long wrId()
    {
        return ((long)generation << 32) | index;
    }
}
