package io.xferd.daemon.storage;

import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.libc.IoUring;

/**
 * The requests of one device and its own io_uring: requests wait in arrival order, each cut into operations of at
 * most {@link #MAX_OPERATION} bytes, and operations of many requests share the ring up to its queue depth, so that
 * small requests from many clients overlap on the device as fio's jobs do. A short operation is resubmitted for its
 * rest; a read at the end of the file marks the request truncated, a write that moves nothing or an error fails it
 * (operations already in flight are waited for, nothing more is submitted). A request whose operations have all
 * completed in full is done, unless it wrote a sync file: then it waits for the next fdatasync of that file, one for
 * every write that landed before it was submitted (a group commit: a batch of sync writes pays one or two, not one
 * each). A failed fdatasync fails its writes and, sticky, every later sync write of that file: the kernel reports a
 * writeback error only once, so a later fdatasync returning 0 proves nothing. The stage's thread only.
 */
final class DeviceQueue implements IoUring.CompletionHandler
{
    static final int MAX_OPERATION = 1 << 20;

    private final long device;
    private final int depth;
    private final StorageStage stage;
    private final StorageRequest[] slotRequest;
    private final long[] slotFileOffset;
    private final long[] slotAddress;
    private final int[] slotRemaining;
    private final boolean[] slotSync;
    private final int[] freeSlots;
    private int freeCount;
    private IoUring ring;
    private StorageRequest waitingHead;
    private StorageRequest waitingTail;
    private StorageRequest syncHead;
    private int inFlight;
    private int peakInFlight;
    private int prepared;

    DeviceQueue(final long device, final int depth, final StorageStage stage)
    {
        this.device = device;
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
        }
        return work;
    }

    /**
     * Block until at least one operation completes (only with operations in flight), then reap.
     */
    int await()
    {
        final IoUring ring = ring();
        ring.submitAndWait(1);
        prepared = 0;
        return reapAndResubmit(ring);
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
        final int slot = (int)userData;
        final StorageRequest request = slotRequest[slot];
        if (slotSync[slot])
        {
            onSynced(slot, request, result);
            return;
        }
        inFlight--;
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
            ring = IoUring.open(depth);
        }
        return ring;
    }

    /**
     * Fail everything still queued (the stage is closing or its ring broke); operations in flight are abandoned
     * with the ring.
     */
    void failAll(final int status)
    {
        for (int slot = 0; slot < depth; slot++)
        {
            final StorageRequest request = slotRequest[slot];
            if (request != null)
            {
                if (slotSync[slot])
                {
                    for (StorageRequest r = request; r != null; )
                    {
                        final StorageRequest next = r.next;
                        stage.completed(r, status);
                        r = next;
                    }
                }
                else if (request.inFlight > 0)
                {
                    request.inFlight = 0;
                    if (request != waitingHead)
                    {
                        stage.completed(request, status);
                    }
                }
                release(slot);
            }
        }
        for (StorageRequest r = waitingHead; r != null; )
        {
            final StorageRequest next = r.next;
            stage.completed(r, status);
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
        inFlight = 0;
        if (ring != null)
        {
            ring.close();
            ring = null;
        }
    }

    void close()
    {
        // let what the kernel is doing finish into memory its owners still hold, then fail what never started
        for (int i = 0; i < 4 * depth && inFlight > 0 && ring != null; i++)
        {
            await();
        }
        failAll(TransferStatus.STORAGE_IO_ERROR);
    }
}
