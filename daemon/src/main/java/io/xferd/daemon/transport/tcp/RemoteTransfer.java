package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.CoalescedRequests;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.TransferStatus;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One request to another daemon while its slices are on the wire: pooled and reused, never allocated per
 * request. Holds the submitter's session and the local region borrowed until the last slice is answered.
 */
final class RemoteTransfer
{
    final AtomicInteger pendingSlices = new AtomicInteger();
    final AtomicInteger firstError = new AtomicInteger();
    final byte[] notify = new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH];
    /** The requests merged into this transfer, each answered on its own at the end; empty for one request. */
    final CoalescedRequests members = new CoalescedRequests();
    ClientSession submitter;
    /** The batch this request is an entry of, or null. */
    io.xferd.daemon.session.BatchTracker batch;
    int batchEntry;
    Region local;
    RemoteSegment target;
    java.util.List<String> remotePreferred;
    long requestId;
    long traceId;
    int opcode;
    long localAddress;
    long targetAddress;
    long length;
    long intakeNanos;
    long submitNanos;
    int lastNicId;
    int notifyLength;
    boolean notifySent;
    /** Requests of this transfer counted in the transport's in-flight requests that need no data-plane thread. */
    int answeredOnItsOwn;

    void reset()
    {
        submitter = null;
        batch = null;
        local = null;
        target = null;
        remotePreferred = null;
        members.clear();
        notifyLength = 0;
        notifySent = false;
        firstError.set(TransferStatus.OK);
    }

    /**
     * Record a slice's outcome, keeping the first failure.
     *
     * @return true when it was the last pending slice.
     */
    boolean sliceDone(final int status)
    {
        if (status != TransferStatus.OK)
        {
            firstError.compareAndSet(TransferStatus.OK, status);
        }
        return pendingSlices.decrementAndGet() == 0;
    }
}
