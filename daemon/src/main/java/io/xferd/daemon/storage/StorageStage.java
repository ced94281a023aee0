package io.xferd.daemon.storage;

import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The daemon's asynchronous storage stage: any thread (transfer workers, TCP peer threads) submits a
 * {@link StorageRequest} and goes on; this agent, on its own thread, keeps the operations of many requests in flight
 * on one io_uring per device ({@link DeviceQueue}, up to the configured queue depth each), reaps their completions
 * and completes each request through its listener once all its bytes have landed (or with its storage status). No
 * thread per request, no allocation per request.
 * <p>
 * Before a request's first operation the file is checked to be at least as long as the region (a file truncated
 * under its region fails with {@link TransferStatus#STORAGE_TRUNCATED} and is never regrown). With operations in
 * flight on one device and nothing new to do, the agent blocks in {@code io_uring_enter} until one completes; with
 * nothing in flight it idles, and {@link #submit} wakes it.
 */
public final class StorageStage implements Agent, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StorageStage.class);
    public static final int DEFAULT_SUBMISSIONS = 4096;

    private final int queueDepth;
    private final ManyToOneConcurrentArrayQueue<StorageRequest> submissions;
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final AtomicCounter errors;
    private final AtomicCounter syncs;
    private final Consumer<StorageRequest> starter = this::start;
    private DeviceQueue[] devices = new DeviceQueue[0];
    private volatile Thread thread;
    private volatile boolean closed;

    /**
     * @param queueDepth the most operations in flight on each device.
     */
    public StorageStage(
        final int queueDepth, final int submissionCapacity, final AtomicCounter bytesRead,
        final AtomicCounter bytesWritten, final AtomicCounter errors, final AtomicCounter syncs)
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
    }

    /**
     * Hand a request to the stage; its listener is called later on the stage's thread. Any thread.
     *
     * @return false when the stage cannot take it now (its submission queue is full, or it is closed): the request
     * was not taken and its listener will not be called.
     */
    public boolean submit(final StorageRequest request)
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
        final Thread agent = thread;
        if (agent != null)
        {
            LockSupport.unpark(agent);
        }
        return true;
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
        int work = submissions.drain(starter);
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
        if (work == 0 && busy == 1 && submissions.isEmpty())
        {
            // one device busy and nothing else to do: sleep in the kernel until it completes something
            try
            {
                work += waitOn.await();
            }
            catch (final NativeException | IllegalStateException ex)
            {
                onBroken(waitOn, ex);
            }
        }
        return work;
    }

    private void start(final StorageRequest request)
    {
        final StorageFile file = request.file;
        if (request.regionOffset < 0 || request.length <= 0 || request.regionOffset > file.length() - request.length)
        {
            completed(request, TransferStatus.STORAGE_OUT_OF_RANGE);
            return;
        }
        final long size = FileIo.size(file.fd());
        if (size < 0)
        {
            completed(request, StorageStatus.of((int)-size));
            return;
        }
        if (size < file.end())
        {
            completed(request, TransferStatus.STORAGE_TRUNCATED);
            return;
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
        grown[devices.length] = new DeviceQueue(device, queueDepth, this);
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

    void onSync()
    {
        syncs.increment();
    }

    void completed(final StorageRequest request, final int status)
    {
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
        closed = true;
        for (final DeviceQueue queue : devices)
        {
            queue.close();
        }
        StorageRequest request;
        while ((request = submissions.poll()) != null)
        {
            completed(request, TransferStatus.STORAGE_IO_ERROR);
        }
    }

    @Override
    public String roleName()
    {
        return "xferd-storage";
    }
}
