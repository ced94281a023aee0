package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Supplier;

/**
 * The RDMA data plane, on one thread: takes submitted requests, posts their slices as signaled RDMA READ/WRITE
 * work requests striped over the preferred paths (never more than {@code maxOutstanding} per QP), polls every
 * device's completion queue, and completes a request once every slice's completion is in: OK only when all
 * succeeded, TRANSPORT_ERROR on the first failed one, TIMEOUT when the transfer timeout passes first. A QP that
 * completes a work request in error is in ERR for good (the rest of its work flushes) and is not posted to again;
 * a QP holding an overdue slice is moved to ERR before the request is answered, so that no late RDMA lands in a
 * buffer the client got back. A request whose preferred paths have no live QP left uses the other paths, and
 * fails at once when none has. It reads
 * the clock once per duty cycle and allocates, locks and logs nothing per slice; an idle strategy that backs off
 * runs it (see {@link io.xferd.daemon.config.DaemonContext#newIdleStrategy()}).
 */
public final class RdmaAgent implements Agent, CompletionHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(RdmaAgent.class);
    private static final int DRAIN_LIMIT = 64;
    private static final long TIMEOUT_CHECK_INTERVAL_NANOS = 1_000_000;
    private static final long FAILURE_LOG_INTERVAL_NANOS = 1_000_000_000L;
    /** {@link #fail} causes that are not a work completion status. */
    private static final int POST_REFUSED = -1;
    private static final int NO_LIVE_QP = -2;

    private final RdmaDevices devices;
    private final ManyToOneConcurrentArrayQueue<RdmaRequest> submissions;
    private final ManyToManyConcurrentArrayQueue<RdmaRequest> requestPool;
    private final RdmaRequest[] active;
    private final RdmaSlice[] slices;
    private final int[] freeSlices;
    private final CompletionSender sender;
    private final Supplier<TransferJournal> journal;
    private final NanoClock clock;
    private final long sliceSize;
    private final long timeoutNanos;
    private final int maxOutstanding;
    private final AtomicCounter completed;
    private final AtomicCounter failed;
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final AtomicCounter bytesSent;
    private final AtomicCounter bytesReceived;
    private final AtomicCounter slicesTimedOut;
    private int activeCount;
    private int freeCount;
    private long now;
    private long lastTimeoutCheck;
    private long lastFailureLog = Long.MIN_VALUE / 2;
    private volatile String lastFailure;
    private volatile boolean stopping;

    RdmaAgent(
        final RdmaDevices devices,
        final ManyToOneConcurrentArrayQueue<RdmaRequest> submissions,
        final ManyToManyConcurrentArrayQueue<RdmaRequest> requestPool,
        final int maxRequests,
        final int maxSlices,
        final CompletionSender sender,
        final SystemCounters counters,
        final Supplier<TransferJournal> journal,
        final NanoClock clock,
        final long sliceSize,
        final long timeoutMs,
        final int maxOutstanding)
    {
        this.devices = devices;
        this.submissions = submissions;
        this.requestPool = requestPool;
        this.active = new RdmaRequest[maxRequests];
        this.slices = new RdmaSlice[maxSlices];
        this.freeSlices = new int[maxSlices];
        for (int i = 0; i < maxSlices; i++)
        {
            slices[i] = new RdmaSlice(i);
            freeSlices[i] = maxSlices - 1 - i;
        }
        this.freeCount = maxSlices;
        this.sender = sender;
        this.journal = journal;
        this.clock = clock;
        this.sliceSize = sliceSize;
        this.timeoutNanos = timeoutMs * 1_000_000L;
        this.maxOutstanding = maxOutstanding;
        this.completed = counters.get(SystemCounter.REQUESTS_COMPLETED);
        this.failed = counters.get(SystemCounter.REQUESTS_FAILED);
        this.bytesRead = counters.get(SystemCounter.BYTES_READ);
        this.bytesWritten = counters.get(SystemCounter.BYTES_WRITTEN);
        this.bytesSent = counters.get(SystemCounter.REMOTE_BYTES_SENT);
        this.bytesReceived = counters.get(SystemCounter.REMOTE_BYTES_RECEIVED);
        this.slicesTimedOut = counters.get(SystemCounter.SLICES_TIMED_OUT);
        this.lastTimeoutCheck = clock.nanoTime();
    }

    @Override
    public int doWork()
    {
        now = clock.nanoTime();
        int work = 0;
        RdmaRequest request;
        while (work < DRAIN_LIMIT && activeCount < active.length && (request = submissions.poll()) != null)
        {
            activate(request);
            work++;
        }
        for (int i = 0; i < activeCount; i++)
        {
            work += post(active[i]);
        }
        for (int d = 0; d < devices.size(); d++)
        {
            work += devices.get(d).poll(this);
        }
        if (now - lastTimeoutCheck >= TIMEOUT_CHECK_INTERVAL_NANOS)
        {
            lastTimeoutCheck = now;
            work += checkTimeouts();
        }
        return work;
    }

    private void activate(final RdmaRequest request)
    {
        request.startNanos = now;
        request.activeIndex = activeCount;
        active[activeCount++] = request;
        if (stopping)
        {
            request.status = TransferStatus.SHUTTING_DOWN;
        }
    }

    /**
     * Post as many of the request's remaining slices as its paths' QPs have room for.
     */
    private int post(final RdmaRequest request)
    {
        int posted = 0;
        final RdmaPath[] paths = request.peer.paths;
        while (!request.allPosted() && freeCount > 0)
        {
            RdmaPath path = null;
            int qp = -1;
            for (int i = 0; i < paths.length && qp < 0; i++)
            {
                final int candidate = (request.nextPath + i) % paths.length;
                if ((request.paths & (1L << (candidate & 63))) != 0)
                {
                    qp = paths[candidate].qpWithCredit(maxOutstanding);
                    if (qp >= 0)
                    {
                        path = paths[candidate];
                        request.nextPath = candidate + 1;
                    }
                }
            }
            if (qp < 0)
            {
                if (!anyLivePath(request.peer.paths, request.paths))
                {
                    final long all = paths.length >= 64 ? -1L : (1L << paths.length) - 1;
                    if (request.paths != all && anyLivePath(paths, all))
                    {
                        request.paths = all; // the preferred NICs' QPs are broken: any live path beats none
                        continue;
                    }
                    fail(request, TransferStatus.TRANSPORT_ERROR, NO_LIVE_QP); // else it would wait for its timeout
                }
                break;
            }
            postSlice(request, path, qp);
            posted++;
        }
        if (request.outstanding == 0 && request.allPosted())
        {
            finish(request); // nothing left in flight: e.g. failed before its first post
        }
        return posted;
    }

    private static boolean anyLivePath(final RdmaPath[] paths, final long mask)
    {
        for (int i = 0; i < paths.length; i++)
        {
            if ((mask & (1L << (i & 63))) != 0 && paths[i].isLive())
            {
                return true;
            }
        }
        return false;
    }

    private void postSlice(final RdmaRequest request, final RdmaPath path, final int qp)
    {
        final RdmaSlice slice = slices[freeSlices[--freeCount]];
        final long offset = request.posted;
        final long length = Math.min(sliceSize, request.length - offset);
        slice.request = request;
        slice.path = path;
        slice.qp = qp;
        slice.sliceIndex = request.sliceIndex++;
        slice.length = length;
        slice.postedNanos = now;
        final int rkey = (int)request.remote.rkey().get(path.peerDevice).longValue();
        if (!path.qps[qp].post(request.read, slice.wrId(), request.localAddress + offset, (int)length,
            request.localKeys.lkey(path.localDevice), request.targetAddress + offset, rkey))
        {
            path.failures.increment();
            release(slice);
            // a QP refusing a post within its credit is unusable; flush what it holds
            breakQp(path, qp, true, "post refused", 0);
            fail(request, TransferStatus.TRANSPORT_ERROR, POST_REFUSED);
            return;
        }
        path.outstanding[qp]++;
        request.outstanding++;
        request.posted = offset + length;
    }

    @Override
    public void onCompletion(final long wrId, final int status, final int vendorError)
    {
        final int index = (int)wrId;
        if (index < 0 || index >= slices.length)
        {
            return;
        }
        final RdmaSlice slice = slices[index];
        final RdmaRequest request = slice.request;
        if (request == null || slice.generation != (int)(wrId >>> 32))
        {
            return; // a completion for a slice its request already gave up on (timed out)
        }
        final RdmaPath path = slice.path;
        path.outstanding[slice.qp]--;
        request.outstanding--;
        request.lastNicId = path.journalNicId;
        final int sliceStatus = status == WorkCompletionStatus.SUCCESS ? TransferStatus.OK :
            TransferStatus.TRANSPORT_ERROR;
        if (sliceStatus == TransferStatus.OK)
        {
            (request.read ? bytesReceived : bytesSent).getAndAdd(slice.length);
            path.bytes.getAndAdd(slice.length);
        }
        else
        {
            if (status != WorkCompletionStatus.WR_FLUSH_ERR)
            {
                path.failures.increment(); // a flush is the consequence of a failure counted already
            }
            // already in ERR: its later work requests all flush
            breakQp(path, slice.qp, false, WorkCompletionStatus.name(status), vendorError);
            fail(request, TransferStatus.TRANSPORT_ERROR, status);
        }
        journal.get().onSlice(request.submitter.slot(), request.requestId, request.traceId, slice.sliceIndex,
            request.peer.journalPeerId, path.journalNicId, slice.length, slice.postedNanos, now, sliceStatus);
        release(slice);
        if (request.outstanding == 0 && request.allPosted())
        {
            finish(request);
        }
    }

    private void fail(final RdmaRequest request, final int status, final int wcStatus)
    {
        if (request.status == TransferStatus.OK)
        {
            request.status = status;
            request.wcStatus = wcStatus;
            final String what = wcStatus >= 0 ? WorkCompletionStatus.name(wcStatus) :
                wcStatus == NO_LIVE_QP ? "no live QP left to the peer" : "post refused by the send queue";
            lastFailure = what;
            if (now - lastFailureLog >= FAILURE_LOG_INTERVAL_NANOS)
            {
                lastFailureLog = now;
                LOG.warn("RDMA request to {} failed: {} (further failures within 1 s not logged)",
                    request.peer.address, what);
            }
        }
    }

    private int checkTimeouts()
    {
        int work = 0;
        for (int i = activeCount - 1; i >= 0; i--)
        {
            final RdmaRequest request = active[i];
            if (now - request.startNanos >= timeoutNanos)
            {
                for (final RdmaSlice slice : slices)
                {
                    if (slice.request == request)
                    {
                        // the work request is still the NIC's: move its QP to ERR before the buffer is given back
                        breakQp(slice.path, slice.qp, true, "work request overdue", 0);
                        slice.path.outstanding[slice.qp]--;
                        slice.path.failures.increment();
                        slicesTimedOut.increment();
                        release(slice);
                    }
                }
                request.outstanding = 0;
                if (request.status == TransferStatus.OK)
                {
                    request.status = TransferStatus.TIMEOUT;
                    lastFailure = "timed out";
                }
                request.posted = request.length;
                finish(request);
                work++;
            }
        }
        return work;
    }

    /**
     * Stop using a QP for good (an RC QP in ERR is not brought back; a new open connects the peer anew).
     *
     * @param abort       also move it to ERR, so that the NIC stops and flushes its outstanding work requests.
     * @param vendorError the completion's {@code vendor_err}, logged (in hex, as mlx5 syndromes are quoted).
     */
    private void breakQp(
        final RdmaPath path, final int qp, final boolean abort, final String why, final int vendorError)
    {
        if (path.markBroken(qp))
        {
            if (abort)
            {
                path.qps[qp].abort();
            }
            LOG.warn("RDMA {} qp {} taken out of service: {}{}{}", path, qp, why,
                vendorError == 0 ? "" : String.format(" (vendor_err 0x%x)", vendorError),
                path.isLive() ? "" : "; no live QP left on this path");
        }
    }

    private void release(final RdmaSlice slice)
    {
        slice.request = null;
        slice.path = null;
        slice.generation++;
        freeSlices[freeCount++] = slice.index;
    }

    private void finish(final RdmaRequest request)
    {
        final int status = request.status;
        final long bytes = status == TransferStatus.OK ? request.length : 0;
        if (status == TransferStatus.OK)
        {
            completed.increment();
            (request.read ? bytesRead : bytesWritten).getAndAdd(bytes);
        }
        else
        {
            failed.increment();
        }
        sender.complete(request.submitter, request.batch, request.batchEntry, request.requestId, status, bytes,
            request.intakeNanos, now);
        journal.get().onCompleted(request.submitter.slot(), request.requestId, request.traceId, request.opcode,
            status, request.length, bytes, request.peer.journalPeerId, request.lastNicId, request.submitNanos,
            request.intakeNanos, now);
        request.local.release();
        request.submitter.release();
        final int index = request.activeIndex;
        final RdmaRequest last = active[--activeCount];
        active[index] = last;
        last.activeIndex = index;
        active[activeCount] = null;
        request.reset();
        requestPool.offer(request);
    }

    /**
     * @return the last failure's cause (an {@code IBV_WC_*} name, "timed out", ...), or null.
     */
    public String lastFailure()
    {
        return lastFailure;
    }

    /**
     * @return requests whose slices are posted or waiting to be.
     */
    public int activeRequests()
    {
        return activeCount;
    }

    /**
     * Fail what has not been posted yet; what is posted still completes (or times out).
     */
    void stop()
    {
        stopping = true;
    }

    @Override
    public void onClose()
    {
        // whatever is still active when the runner stops is answered, so no client waits forever
        now = clock.nanoTime();
        while (activeCount > 0)
        {
            final RdmaRequest request = active[activeCount - 1];
            for (final RdmaSlice slice : slices)
            {
                if (slice.request == request)
                {
                    // as on a timeout: stop the NIC before answering
                    breakQp(slice.path, slice.qp, true, "shutting down", 0);
                    slice.path.outstanding[slice.qp]--;
                    release(slice);
                }
            }
            if (request.status == TransferStatus.OK)
            {
                request.status = TransferStatus.SHUTTING_DOWN;
            }
            finish(request);
        }
        RdmaRequest request;
        while ((request = submissions.poll()) != null)
        {
            activate(request);
            request.status = TransferStatus.SHUTTING_DOWN;
            finish(request);
        }
    }

    @Override
    public String roleName()
    {
        return "xferd-rdma";
    }
}
