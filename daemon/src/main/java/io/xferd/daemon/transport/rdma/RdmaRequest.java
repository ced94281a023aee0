package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.TransferStatus;

/**
 * One remote request while its slices are posted: pooled, filled by the submitting worker, then owned by the
 * {@link RdmaAgent}. Holds the submitter's session and the local region borrowed until its last completion.
 */
final class RdmaRequest
{
    ClientSession submitter;
    /** The batch this request is an entry of, or null. */
    io.xferd.daemon.session.BatchTracker batch;
    int batchEntry;
    Region local;
    RegionKeys localKeys;
    RdmaPeer peer;
    SegmentDescriptor.Buffer remote;
    long requestId;
    long traceId;
    boolean read;
    int opcode;
    long localAddress;
    long targetAddress;
    long length;
    long submitNanos;
    long intakeNanos;
    long startNanos;
    long paths;
    int nextPath;
    long posted;
    int outstanding;
    int sliceIndex;
    int status;
    int wcStatus;
    int lastNicId;
    int activeIndex;

    boolean allPosted()
    {
        return posted >= length || status != TransferStatus.OK;
    }

    void reset()
    {
        submitter = null;
        batch = null;
        local = null;
        localKeys = null;
        peer = null;
        remote = null;
        posted = 0;
        outstanding = 0;
        sliceIndex = 0;
        status = TransferStatus.OK;
        wcStatus = 0;
        nextPath = 0;
        activeIndex = -1;
    }
}
