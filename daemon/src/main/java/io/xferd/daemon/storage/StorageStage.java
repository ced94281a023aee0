package io.xferd.daemon.storage;

import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.EventFd;
import io.xferd.nativebindings.libc.FileIo;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The daemon's asynchronous storage stage: any thread (transfer workers, TCP peer threads) submits a
 * {@link StorageRequest} and goes on; this agent, on its own thread, keeps the operations of many requests in flight
 * on one io_uring per device ({@link DeviceQueue}, up to the configured queue depth each), reaps their completions
 * and completes each request through its listener once all its bytes have landed (or with its storage status). No
 * thread per request, no allocation per request.
 * <p>
 * Before a WRITE's first operation the file is checked to be at least as long as the region, once per batch of
 * submissions drained together (a file truncated under its region fails with {@link TransferStatus#STORAGE_TRUNCATED}
 * and is never regrown); a READ needs the check only until the size was once seen to be enough, as a read past a new
 * end comes back short, which fails it the same way. With operations in flight on one device and nothing new to do,
 * the agent blocks in {@code io_uring_enter} until one completes or {@link #submit} signals an eventfd that ring
 * polls (a new request does not wait for the device's next completion); with nothing in flight it idles, and
 * {@link #submit} unparks it. On close, or when a ring breaks, what the kernel holds is cancelled and reaped before
 * any request is failed ({@link DeviceQueue#quiesce}).
 * <p>
 * An {@linkplain #inline inline} stage has no thread of its own: its owner (a transfer worker) submits and runs
 * {@link #doWork} on its own thread, so a local file request goes from the worker straight into the device's
 * submission ring and its completion is reaped by the same thread, without crossing to another one (no queue, no
 * wake-up, no eventfd); it never sleeps in the kernel, its owner's idle strategy polls the completion ring, which
 * costs no system call.
 */
public final class StorageStage implements Agent, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StorageStage.class);
    private static final AtomicLong STAGES = new AtomicLong();
    public static final int DEFAULT_SUBMISSIONS = 4096;
    /** The longest sleep in the kernel: bounds how long a stop waits for the thread (a wake-up normally ends it). */
    static final long DEFAULT_AWAIT_NANOS = 100_000_000L;

    private final int queueDepth;
    private final ManyToOneConcurrentArrayQueue<StorageRequest> submissions;
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final AtomicCounter errors;
    private final AtomicCounter syncs;
    private final Consumer<StorageRequest> starter = this::start;
    private final long awaitNanos;
    private final long stallNanos;
    // signalled by a submitter while the agent sleeps in io_uring_enter; polled by that ring
    private final EventFd wake;
    // submitters inside submit(): the eventfd is closed only once none can still signal it
    private final AtomicInteger submitting = new AtomicInteger();
    private DeviceQueue[] devices = new DeviceQueue[0];
    // the size checks of WRITEs: one lseek per file per batch of submissions drained together. Each stage counts
    // from its own base, so that a file's last-checked batch written by another stage never matches this one's
    // (the stage's number in the top 20 bits, the count of batches below: counting wraps within the stage's own range,
    // and only batches that started something count, so a stage spinning for years never reaches another's range)
    private static final int BATCH_COUNT_BITS = 44;
    private static final long BATCH_COUNT_MASK = (1L << BATCH_COUNT_BITS) - 1;
    private final long batchBase = (STAGES.getAndIncrement() & 0xF_FFFF) << BATCH_COUNT_BITS;
    private long batch = batchBase;
    // an inline stage's submissions, in order (its owner's thread only; linked through StorageRequest.next)
    private StorageRequest pendingHead;
    private StorageRequest pendingTail;
    private long wakeUps;
    private volatile boolean sleeping;
    private volatile Thread thread;
    private volatile boolean closed;

    /**
     * @param queueDepth the most operations in flight on each device.
     */
    public StorageStage(
        final int queueDepth, final int submissionCapacity, final AtomicCounter bytesRead,
        final AtomicCounter bytesWritten, final AtomicCounter errors, final AtomicCounter syncs)
    {
        this(queueDepth, submissionCapacity, bytesRead, bytesWritten, errors, syncs, DEFAULT_AWAIT_NANOS);
    }

    /**
     * @param awaitNanos the longest sleep in {@code io_uring_enter} (tests: long, so that only a wake-up ends it).
     */
    StorageStage(
        final int queueDepth, final int submissionCapacity, final AtomicCounter bytesRead,
        final AtomicCounter bytesWritten, final AtomicCounter errors, final AtomicCounter syncs,
        final long awaitNanos)
    {
        this(queueDepth, submissionCapacity, bytesRead, bytesWritten, errors, syncs, awaitNanos,
            DeviceQueue.STALL_NANOS, false);
    }

    /**
     * @param stallNanos how long the kernel may hold one operation before it is cancelled (tests: short).
     */
    StorageStage(
        final int queueDepth, final int submissionCapacity, final AtomicCounter bytesRead,
        final AtomicCounter bytesWritten, final AtomicCounter errors, final AtomicCounter syncs,
        final long awaitNanos, final long stallNanos)
    {
        this(queueDepth, submissionCapacity, bytesRead, bytesWritten, errors, syncs, awaitNanos, stallNanos, false);
    }

    private StorageStage(
        final int queueDepth, final int submissionCapacity, final AtomicCounter bytesRead,
        final AtomicCounter bytesWritten, final AtomicCounter errors, final AtomicCounter syncs,
        final long awaitNanos, final long stallNanos, final boolean inline)
    {
        if (queueDepth < 1 || queueDepth > 4096)
        {
            throw new IllegalArgumentException("storage queue depth must be in 1..4096: " + queueDepth);
        }
        this.queueDepth = queueDepth;
        this.submissions = new ManyToOneConcurrentArrayQueue<>(submissionCapacity);
        this.bytesRead = bytesRead;
        this.bytesWritten = bytesWritten;
        this.errors = errors;
        this.syncs = syncs;
        this.awaitNanos = awaitNanos;
        this.stallNanos = stallNanos;
        this.wake = inline ? null : EventFd.open();
    }

    /**
     * A stage without a thread of its own, run by its owner: {@link #submit} and {@link #doWork} (which submits
     * and reaps, never blocking) from the owner's thread only, and listeners are called on that thread from
     * {@link #doWork} (never from within {@link #submit}). The owner keeps calling {@link #doWork} while
     * {@link #isIdle()} is false, and closes it on its own thread.
     *
     * @param queueDepth the most operations in flight on each device.
     */
    public static StorageStage inline(
        final int queueDepth, final AtomicCounter bytesRead, final AtomicCounter bytesWritten,
        final AtomicCounter errors, final AtomicCounter syncs)
    {
        return new StorageStage(queueDepth, 2, bytesRead, bytesWritten, errors, syncs, 0, DeviceQueue.STALL_NANOS, true);
    }

    /**
     * @return true when this stage has no thread of its own ({@link #inline}).
     */
    public boolean isInline()
    {
        return wake == null;
    }

    /**
     * @return true when no request is waiting, in flight or waiting for its fdatasync (the stage's thread).
     */
    public boolean isIdle()
    {
        if (pendingHead != null || !submissions.isEmpty())
        {
            return false;
        }
        for (final DeviceQueue queue : devices)
        {
            if (!queue.isIdle())
            {
                return false;
            }
        }
        return true;
    }
    /**
     * Hand a request to the stage; its listener is called later on the stage's thread. Any thread.
     *
     * @return false when the stage cannot take it now (its submission queue is full, or it is closed): the request
     * was not taken and its listener will not be called.
     */
    public boolean submit(final StorageRequest request)
    {
        if (wake == null)
        {
            return submitInline(request);
        }
        submitting.getAndIncrement();
        try
        {
            if (closed)
            {
                return false;
            }
            request.reset();
            if (!submissions.offer(request))
            {
                return false;
            }
            if (sleeping)
            {
                wake.signal(); // the agent sleeps in io_uring_enter on a busy device: end that wait now
            }
            else
            {
                final Thread agent = thread;
                if (agent != null)
                {
                    LockSupport.unpark(agent);
                }
            }
            return true;
        }
        finally
        {
            submitting.getAndDecrement();
        }
    }

    private boolean submitInline(final StorageRequest request)
    {
        if (closed)
        {
            return false;
        }
        request.reset();
        if (pendingTail == null)
        {
            pendingHead = request;
        }
        else
        {
            pendingTail.next = request;
        }
        pendingTail = request;
        return true;
    }

    private int startPending()
    {
        int started = 0;
        StorageRequest request = pendingHead;
        pendingHead = null;
        pendingTail = null;
        while (request != null)
        {
            final StorageRequest next = request.next;
            request.next = null;
            start(request);
            started++;
            request = next;
        }
        return started;
    }

    public int queueDepth()
    {
        return queueDepth;
    }

    @Override
    public void onStart()
    {
        thread = Thread.currentThread();
    }

    @Override
    public int doWork()
    {
        int work = wake == null ? startPending() : submissions.drain(starter);
        if (work > 0)
        {
            batch = batchBase | ((batch + 1) & BATCH_COUNT_MASK);
        }
        DeviceQueue waitOn = null;
        int busy = 0;
        for (final DeviceQueue queue : devices)
        {
            if (queue.isIdle())
            {
                continue;
            }
            try
            {
                work += queue.pump();
                if (queue.inFlight() > 0)
                {
                    busy++;
                    waitOn = queue;
                }
            }
            catch (final NativeException | IllegalStateException ex)
            {
                onBroken(queue, ex);
            }
        }
        if (wake != null && work == 0 && busy == 1 && submissions.isEmpty())
        {
            // one device busy and nothing else to do: sleep in the kernel until it completes something or a
            // submitter signals the eventfd that ring polls. The flag is set before the queue is looked at again,
            // and a submitter looks at the flag after its offer: one of the two sees the other
            sleeping = true;
            try
            {
                if (submissions.isEmpty() && !closed)
                {
                    work += waitOn.await(wake.fd(), awaitNanos);
                }
            }
            catch (final NativeException | IllegalStateException ex)
            {
                onBroken(waitOn, ex);
            }
            finally
            {
                sleeping = false;
            }
        }
        return work;
    }

    /**
     * The wake-up poll fired (the stage's thread, reaping): reset the eventfd so that the next poll waits again.
     */
    void onWoken()
    {
        wakeUps++;
        wake.drain();
    }

    /**
     * @return true while the agent sleeps in {@code io_uring_enter} on a busy device (tests).
     */
    boolean isSleeping()
    {
        return sleeping;
    }

    /**
     * @return how many times a submission ended a sleep in the kernel. The stage's thread (or once stopped).
     */
    long wakeUps()
    {
        return wakeUps;
    }

    private void start(final StorageRequest request)
    {
        final StorageFile file = request.file;
        if (request.regionOffset < 0 || request.length <= 0 || request.regionOffset > file.length() - request.length)
        {
            completed(request, TransferStatus.STORAGE_OUT_OF_RANGE);
            return;
        }
        // a READ past a new end comes back short (truncated); a WRITE would regrow the file, so it is checked per batch
        if (file.knownSize < file.end() || request.write && file.sizeCheckedBatch != batch)
        {
            final long size = FileIo.size(file.fd());
            if (size < 0)
            {
                completed(request, StorageStatus.of((int)-size));
                return;
            }
            file.knownSize = size;
            file.sizeCheckedBatch = batch;
            if (size < file.end())
            {
                completed(request, TransferStatus.STORAGE_TRUNCATED);
                return;
            }
        }
        request.fileOffset = file.fileOffset() + request.regionOffset;
        queueOf(file.device()).enqueue(request);
    }

    private DeviceQueue queueOf(final long device)
    {
        for (final DeviceQueue queue : devices)
        {
            if (queue.device() == device)
            {
                return queue;
            }
        }
        // a new device: once per device for the life of the daemon
        final DeviceQueue[] grown = java.util.Arrays.copyOf(devices, devices.length + 1);
        grown[devices.length] = new DeviceQueue(device, queueDepth, this, stallNanos);
        devices = grown;
        return grown[devices.length - 1];
    }

    /**
     * An io_uring that cannot be set up or entered (out of locked memory, a kernel refusing) fails the requests of
     * its device with a storage status, not the stage; the next request sets up a new ring.
     */
    private void onBroken(final DeviceQueue queue, final RuntimeException ex)
    {
        LOG.warn("storage queue of device {}:{} failed: {}", queue.device() >>> 32, queue.device() & 0xFFFFFFFFL,
            ex.getMessage());
        queue.failAll(TransferStatus.STORAGE_IO_ERROR);
    }

    void onQuiesceFailed(final DeviceQueue queue, final RuntimeException ex)
    {
        LOG.warn("storage queue of device {}:{} could not take back its operations: {}", queue.device() >>> 32,
            queue.device() & 0xFFFFFFFFL, ex.getMessage());
    }

    /**
     * The kernel kept operations of a ring past every wait: their requests are never completed, so their memory
     * stays borrowed (mapped) for the life of the daemon rather than being written into after it was given back.
     */
    void onAbandoned(final DeviceQueue queue, final int operations)
    {
        errors.increment();
        LOG.error("storage queue of device {}:{}: {} operations still in the kernel; their requests are abandoned " +
            "with their memory mapped", queue.device() >>> 32, queue.device() & 0xFFFFFFFFL, operations);
    }

    /**
     * @return the most operations in flight at once on any one device so far. The stage's thread (or once stopped).
     */
    int peakInFlight()
    {
        int peak = 0;
        for (final DeviceQueue queue : devices)
        {
            peak = Math.max(peak, queue.peakInFlight());
        }
        return peak;
    }

    /**
     * @return how many operations were cancelled for stalling, over every device (tests; the stage's thread or once
     * stopped).
     */
    long stallCancels()
    {
        long cancels = 0;
        for (final DeviceQueue queue : devices)
        {
            cancels += queue.stallCancels();
        }
        return cancels;
    }

    void onSync()
    {
        syncs.increment();
    }

    void completed(final StorageRequest request, final int status)
    {
        request.file.onCompleted(request.write, request.length, status == TransferStatus.OK);
        if (status == TransferStatus.OK)
        {
            (request.write ? bytesWritten : bytesRead).getAndAdd(request.length);
        }
        else
        {
            errors.increment();
        }
        try
        {
            request.complete(status);
        }
        catch (final RuntimeException ex)
        {
            LOG.error("storage request listener failed", ex);
        }
    }

    @Override
    public void onClose()
    {
        close();
    }

    /**
     * Fail whatever is still queued or in flight; later submissions are refused.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final DeviceQueue queue : devices)
        {
            queue.close();
        }
        // a submitter that saw the stage open may still be in submit(): its request is failed here, and the eventfd
        // it may signal stays open until it has left (bounded: submit() never blocks)
        while (submitting.get() > 0)
        {
            Thread.onSpinWait();
        }
        StorageRequest request;
        while ((request = submissions.poll()) != null)
        {
            completed(request, TransferStatus.STORAGE_IO_ERROR);
        }
        request = pendingHead;
        pendingHead = null;
        pendingTail = null;
        while (request != null)
        {
            final StorageRequest next = request.next;
            completed(request, TransferStatus.STORAGE_IO_ERROR);
            request = next;
        }
        if (wake != null)
        {
            wake.close();
        }
    }

    @Override
    public String roleName()
    {
        return "xferd-storage";
    }
}
