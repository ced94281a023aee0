package io.xferd.daemon.storage;

import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.libc.IoUring;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests of one device and its own io_uring: requests wait in arrival order, each cut into operations of at
 * most {@link #MAX_OPERATION} bytes, and operations of many requests share the ring up to its queue depth, so that
 * small requests from many clients overlap on the device as fio's jobs do. A short operation is resubmitted for its
 * rest; a read at the end of the file marks the request truncated, a write that moves nothing or an error fails it
 * (operations already in flight are waited for, nothing more is submitted). A request whose operations have all
 * completed in full is done, unless it wrote a sync file: then it waits for the next fdatasync of that file, one for
 * every write that landed before it was submitted (a group commit: a batch of sync writes pays one or two, not one
 * each). A failed fdatasync fails its writes and, sticky, every later sync write of that file: the kernel reports a
 * writeback error only once, so a later fdatasync returning 0 proves nothing. An operation the kernel has held for
 * longer than the stall bound is cancelled (one not started ends with -ECANCELED and fails its request; one the
 * device has goes on and is logged), so that a lost completion fails one request instead of holding it until its
 * client gives up. The stage's thread only.
 */
final class DeviceQueue implements IoUring.CompletionHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(DeviceQueue.class);
    static final int MAX_OPERATION = 1 << 20;
    /** The user data of the poll on the stage's wake-up eventfd (slots are 0..depth-1). */
    static final long WAKE = -1L;
    /** The user data of the cancellation of everything in flight (on close or a broken ring). */
    static final long CANCEL = -2L;
    /** The user data of the cancellation of one operation held past the stall bound. */
    static final long STALL_CANCEL = -3L;
    /** How long the kernel may hold one operation before it is cancelled (as the synchronous path's bound). */
    static final long STALL_NANOS = StorageIo.STALL_NANOS;
    /** How long a quiescing queue waits for the kernel to give back its operations before abandoning them. */
    static final int QUIESCE_WAITS = 100;
    static final long QUIESCE_WAIT_NANOS = 100_000_000L;

    private final long device;
    private final int depth;
    private final StorageStage stage;
    private final StorageRequest[] slotRequest;
    private final long[] slotFileOffset;
    private final long[] slotAddress;
    private final int[] slotRemaining;
    private final boolean[] slotSync;
    // when each slot's operation was handed to the ring, and whether its cancellation was asked for since
    private final long[] slotStartedAt;
    private final boolean[] slotCancelled;
    private final long stallNanos;
    private long nextStallCheckAt;
    private long stallCancels;
    private final int[] freeSlots;
    private int freeCount;
    private IoUring ring;
    private StorageRequest waitingHead;
    private StorageRequest waitingTail;
    private StorageRequest syncHead;
    private int inFlight;
    private int peakInFlight;
    private int prepared;
    // a poll on the stage's eventfd is armed on this ring: a submission from another thread ends a wait in the kernel
    private boolean wakeArmed;
    // closing or broken: nothing new is submitted, short operations are not resubmitted
    private boolean quiescing;

    DeviceQueue(final long device, final int depth, final StorageStage stage)
    {
        this(device, depth, stage, STALL_NANOS);
    }

    /**
     * @param stallNanos how long the kernel may hold one operation before it is cancelled.
     */
    DeviceQueue(final long device, final int depth, final StorageStage stage, final long stallNanos)
    {
        this.device = device;
        this.stallNanos = stallNanos;
        slotStartedAt = new long[depth];
        slotCancelled = new boolean[depth];
        this.depth = depth;
        this.stage = stage;
        slotRequest = new StorageRequest[depth];
        slotFileOffset = new long[depth];
        slotAddress = new long[depth];
        slotRemaining = new int[depth];
        slotSync = new boolean[depth];
        freeSlots = new int[depth];
        for (int i = 0; i < depth; i++)
        {
            freeSlots[i] = i;
        }
        freeCount = depth;
    }

    long device()
    {
        return device;
    }

    /**
     * @return operations (and fdatasyncs) in flight on the device now.
     */
    int inFlight()
    {
        return inFlight;
    }

    boolean isIdle()
    {
        return inFlight == 0 && waitingHead == null && syncHead == null;
    }

    void enqueue(final StorageRequest request)
    {
        if (waitingTail == null)
        {
            waitingHead = request;
        }
        else
        {
            waitingTail.next = request;
        }
        waitingTail = request;
    }

    /**
     * Fill the ring from the waiting requests, start the fdatasyncs due, submit, reap what has completed.
     *
     * @return how much happened (operations prepared plus completions reaped).
     */
    int pump()
    {
        final IoUring ring = ring();
        int work = fill(ring) + startSyncs(ring);
        if (prepared > 0)
        {
            ring.submit();
            prepared = 0;
        }
        if (inFlight > 0)
        {
            work += reapAndResubmit(ring);
            cancelStalled(ring);
        }
        return work;
    }

    /**
     * Block until at least one operation completes (only with operations in flight), {@code wake} is signalled (a
     * new submission: it need not wait for the device), or {@code timeoutNanos} pass; then reap.
     */
    int await(final int wakeFd, final long timeoutNanos)
    {
        final IoUring ring = ring();
        if (!wakeArmed && wakeFd >= 0)
        {
            if (!ring.preparePollIn(wakeFd, WAKE))
            {
                throw new IllegalStateException("io_uring full with " + inFlight + " of " + depth + " in flight");
            }
            wakeArmed = true;
        }
        ring.submitAndWait(1, timeoutNanos);
        prepared = 0;
        final int reaped = reapAndResubmit(ring);
        cancelStalled(ring);
        return reaped;
    }

    /**
     * Asks the kernel to cancel each operation it has held for {@link #stallNanos} or longer (once per operation).
     * The slots are looked at a few times per bound, not per pump: the scan is over the whole queue depth.
     */
    private void cancelStalled(final IoUring ring)
    {
        final long now = System.nanoTime();
        if (inFlight == 0 || now - nextStallCheckAt < 0)
        {
            return;
        }
        nextStallCheckAt = now + Math.max(stallNanos >> 2, 1_000_000L);
        int cancelled = 0;
        for (int slot = 0; slot < depth; slot++)
        {
            final StorageRequest request = slotRequest[slot];
            if (request == null || slotCancelled[slot] || now - slotStartedAt[slot] < stallNanos)
            {
                continue;
            }
            slotCancelled[slot] = true;
            if (slotSync[slot])
            {
                // an fdatasync cannot be taken back from the file system: its writes wait for it
                LOG.error("storage: an fdatasync of fd {} has not returned in {} ms", request.file.fd(),
                    (now - slotStartedAt[slot]) / 1_000_000);
                continue;
            }
            // submitted now, before the slot can be reaped and reused: the cancellation finds this operation or none
            if (!ring.prepareCancel(slot, STALL_CANCEL))
            {
                ring.submit();
                ring.prepareCancel(slot, STALL_CANCEL);
            }
            cancelled++;
            LOG.warn("storage: an operation on fd {} has had no completion for {} ms, cancelling it",
                request.file.fd(), (now - slotStartedAt[slot]) / 1_000_000);
        }
        if (cancelled > 0)
        {
            stallCancels += cancelled;
            ring.submit();
        }
    }

    /**
     * @return how many operations were cancelled for stalling (tests).
     */
    long stallCancels()
    {
        return stallCancels;
    }

    private int reapAndResubmit(final IoUring ring)
    {
        final int reaped = ring.reap(this);
        if (prepared > 0)
        {
            ring.submit(); // short operations' rests, prepared while reaping
            prepared = 0;
        }
        return reaped;
    }

    private int fill(final IoUring ring)
    {
        int work = 0;
        while (waitingHead != null && freeCount > 0)
        {
            final StorageRequest request = waitingHead;
            if (request.failed() || request.submitted == request.length)
            {
                popWaiting();
                if (request.inFlight == 0)
                {
                    finish(request);
                }
                continue;
            }
            final int slot = freeSlots[--freeCount];
            final int chunk = (int)Math.min(MAX_OPERATION, request.length - request.submitted);
            slotRequest[slot] = request;
            slotSync[slot] = false;
            slotFileOffset[slot] = request.fileOffset + request.submitted;
            slotAddress[slot] = request.address + request.submitted;
            slotRemaining[slot] = chunk;
            prepare(ring, slot);
            request.inFlight++;
            request.submitted += chunk;
            work++;
        }
        // a request whose last operation was just submitted leaves the queue now (its completion may come first)
        if (waitingHead != null && waitingHead.submitted == waitingHead.length && !waitingHead.failed())
        {
            popWaiting();
        }
        return work;
    }

    private void popWaiting()
    {
        final StorageRequest request = waitingHead;
        waitingHead = request.next;
        if (waitingHead == null)
        {
            waitingTail = null;
        }
        request.next = null;
    }

    /**
     * One fdatasync for each file with landed sync writes and none in flight, covering all of them.
     */
    private int startSyncs(final IoUring ring)
    {
        int started = 0;
        while (syncHead != null && freeCount > 0)
        {
            StorageRequest candidate = syncHead;
            while (candidate != null && candidate.file.syncInFlight)
            {
                candidate = candidate.next;
            }
            if (candidate == null)
            {
                break;
            }
            final StorageFile file = candidate.file;
            final int slot = freeSlots[--freeCount];
            slotSync[slot] = true;
            slotRequest[slot] = takeSyncWaiters(file);
            slotStartedAt[slot] = System.nanoTime();
            slotCancelled[slot] = false;
            file.syncInFlight = true;
            if (!ring.prepareFsync(file.fd(), true, slot))
            {
                throw new IllegalStateException("io_uring full with " + inFlight + " of " + depth + " in flight");
            }
            prepared++;
            inFlight++;
            started++;
            stage.onSync();
        }
        return started;
    }

    /**
     * @return the chain (through {@code next}) of every waiting request of {@code file}, taken off the sync list.
     */
    private StorageRequest takeSyncWaiters(final StorageFile file)
    {
        StorageRequest taken = null;
        StorageRequest kept = null;
        StorageRequest keptTail = null;
        StorageRequest request = syncHead;
        while (request != null)
        {
            final StorageRequest next = request.next;
            if (request.file == file)
            {
                request.next = taken;
                taken = request;
            }
            else
            {
                request.next = null;
                if (keptTail == null)
                {
                    kept = request;
                }
                else
                {
                    keptTail.next = request;
                }
                keptTail = request;
            }
            request = next;
        }
        syncHead = kept;
        return taken;
    }

    private void prepare(final IoUring ring, final int slot)
    {
        final StorageRequest request = slotRequest[slot];
        final boolean ok = request.write ?
            ring.prepareWrite(request.file.fd(), slotAddress[slot], slotRemaining[slot], slotFileOffset[slot], slot) :
            ring.prepareRead(request.file.fd(), slotAddress[slot], slotRemaining[slot], slotFileOffset[slot], slot);
        if (!ok)
        {
            throw new IllegalStateException("io_uring full with " + inFlight + " of " + depth + " in flight");
        }
        slotStartedAt[slot] = System.nanoTime();
        slotCancelled[slot] = false;
        prepared++;
        inFlight++;
        peakInFlight = Math.max(peakInFlight, inFlight);
    }

    /**
     * @return the most operations this queue has had in flight at once (tests: requests really overlap).
     */
    int peakInFlight()
    {
        return peakInFlight;
    }

    @Override
    public void onCompletion(final long userData, final int result)
    {
        if (userData < 0)
        {
            if (userData == WAKE)
            {
                wakeArmed = false;
                stage.onWoken();
            }
            else if (userData == STALL_CANCEL && result < 0 && result != -Errno.ENOENT)
            {
                // -EALREADY: the device has the operation, it completes (or not) on its own; -ENOENT: it just did
                LOG.error("storage: the kernel could not cancel a stalled operation (errno {}): it is left to the " +
                    "device", -result);
            }
            return; // a cancellation's own completion: what it cancelled completes on its own
        }
        final int slot = (int)userData;
        final StorageRequest request = slotRequest[slot];
        if (slotSync[slot])
        {
            onSynced(slot, request, result);
            return;
        }
        inFlight--;
        if (quiescing && result >= 0 && result < slotRemaining[slot])
        {
            request.errno = request.errno == 0 ? Errno.ECANCELED : request.errno; // its rest is never asked for
        }
        if (result > 0 && result < slotRemaining[slot] && !request.failed())
        {
            // short: the same slot goes again for the rest
            slotFileOffset[slot] += result;
            slotAddress[slot] += result;
            slotRemaining[slot] -= result;
            prepare(ring, slot);
            return;
        }
        if (result < 0)
        {
            request.errno = request.errno == 0 ? -result : request.errno;
        }
        else if (result == 0)
        {
            if (request.write)
            {
                request.errno = request.errno == 0 ? Errno.EIO : request.errno;
            }
            else
            {
                request.truncated = true;
            }
        }
        else if (result < slotRemaining[slot])
        {
            request.truncated |= request.errno == 0; // the request already failed: its rest is not worth asking for
        }
        release(slot);
        request.inFlight--;
        if (request.inFlight == 0 && (request.submitted == request.length || request.failed()) &&
            request != waitingHead)
        {
            finish(request);
        }
    }

    private void onSynced(final int slot, final StorageRequest chain, final int result)
    {
        inFlight--;
        release(slot);
        StorageRequest request = chain;
        final StorageFile file = request.file;
        file.syncInFlight = false;
        if (result < 0 && file.syncErrno == 0)
        {
            file.syncErrno = -result;
        }
        final int status = file.syncErrno == 0 ? TransferStatus.OK : StorageStatus.of(file.syncErrno);
        while (request != null)
        {
            final StorageRequest next = request.next;
            stage.completed(request, status);
            request = next;
        }
    }

    private void release(final int slot)
    {
        final StorageRequest request = slotRequest[slot];
        if (request != null && request.truncated)
        {
            request.file.knownSize = -1; // look at the size again before the next request
        }
        slotRequest[slot] = null;
        freeSlots[freeCount++] = slot;
    }

    /**
     * Every operation of the request is done: fail it, complete it, or queue it for its file's next fdatasync.
     */
    private void finish(final StorageRequest request)
    {
        if (request.errno != 0)
        {
            stage.completed(request, StorageStatus.of(request.errno));
        }
        else if (request.truncated)
        {
            stage.completed(request, TransferStatus.STORAGE_TRUNCATED);
        }
        else if (request.write && request.file.sync() && request.file.syncErrno != 0)
        {
            // an earlier fdatasync failed: nothing written since can be shown to have landed
            stage.completed(request, StorageStatus.of(request.file.syncErrno));
        }
        else if (request.write && request.file.sync())
        {
            request.next = syncHead;
            syncHead = request;
        }
        else
        {
            stage.completed(request, TransferStatus.OK);
        }
    }

    private IoUring ring()
    {
        if (ring == null)
        {
            ring = IoUring.open(Math.min(4096, depth + 2)); // + the wake-up poll and a cancellation
        }
        return ring;
    }

    /**
     * Take back from the kernel every operation in flight before anything is failed: a request completes only once
     * the kernel holds none of its operations, because its completion gives back the borrows that keep its memory
     * mapped (a read still under way would write into memory already unmapped, or mapped again for something else).
     * Operations not yet started are cancelled ({@code IORING_OP_ASYNC_CANCEL}, any), those the device has are waited
     * for; requests whose operations all came back complete as usual (OK or their status). After this, nothing more
     * is submitted on this ring.
     *
     * @return true when nothing is left in flight; false when the kernel kept operations for
     * {@link #QUIESCE_WAITS} waits of {@link #QUIESCE_WAIT_NANOS}, or the ring cannot be entered any more.
     */
    boolean quiesce()
    {
        quiescing = true;
        if (ring == null || inFlight == 0)
        {
            return true;
        }
        try
        {
            prepared = 0;
            if (!ring.prepareCancelAll(CANCEL))
            {
                ring.submit();
                ring.prepareCancelAll(CANCEL);
            }
            for (int i = 0; i < QUIESCE_WAITS && inFlight > 0; i++)
            {
                ring.submitAndWait(1, QUIESCE_WAIT_NANOS);
                ring.reap(this);
            }
        }
        catch (final RuntimeException ex)
        {
            stage.onQuiesceFailed(this, ex);
        }
        return inFlight == 0;
    }

    /**
     * Fail everything still queued (the stage is closing or its ring broke), after {@link #quiesce} took back what
     * the kernel had. A request the kernel still holds an operation of is abandoned, not completed: its borrows are
     * never given back, so its memory stays mapped (a leak, logged, rather than the kernel writing into memory that
     * is no longer the request's); the ring is then left open too, as closing it would not wait for the kernel.
     */
    void failAll(final int status)
    {
        quiesce();
        int abandoned = 0;
        for (int slot = 0; slot < depth; slot++)
        {
            final StorageRequest request = slotRequest[slot];
            if (request != null)
            {
                if (slotSync[slot])
                {
                    // an fdatasync touches no request's memory: its writes can be failed
                    for (StorageRequest r = request; r != null; )
                    {
                        final StorageRequest next = r.next;
                        stage.completed(r, status);
                        r = next;
                    }
                }
                else
                {
                    abandoned++;
                }
                slotRequest[slot] = null;
            }
        }
        for (StorageRequest r = waitingHead; r != null; )
        {
            final StorageRequest next = r.next;
            if (r.inFlight == 0)
            {
                stage.completed(r, status);
            }
            r = next;
        }
        for (StorageRequest r = syncHead; r != null; )
        {
            final StorageRequest next = r.next;
            stage.completed(r, status);
            r = next;
        }
        waitingHead = null;
        waitingTail = null;
        syncHead = null;
        freeCount = 0;
        for (int slot = 0; slot < depth; slot++)
        {
            if (slotRequest[slot] == null)
            {
                freeSlots[freeCount++] = slot;
            }
        }
        if (abandoned > 0)
        {
            stage.onAbandoned(this, abandoned);
        }
        else if (ring != null)
        {
            ring.close();
        }
        ring = null;
        inFlight = 0;
        wakeArmed = false;
        quiescing = false;
    }

    void close()
    {
        failAll(TransferStatus.STORAGE_IO_ERROR);
    }
}
