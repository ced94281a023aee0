package io.xferd.daemon.storage;

import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.IoUring;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One data-plane thread's storage agent: moves a request's bytes between memory (a native address the caller keeps
 * mapped) and a {@link StorageFile} through this thread's own io_uring, cut into operations of at most
 * {@link #MAX_OPERATION} bytes with up to {@code queueDepth} in flight, completions reaped in batches. No thread per
 * request and no allocation per request; the ring and the bounce buffer are made on first use, so a daemon without
 * storage regions sets up no io_uring.
 * <p>
 * O_DIRECT files: a request whose file offset, memory address and length are block aligned goes straight between
 * memory and the device. Any other goes through the aligned bounce buffer a chunk at a time; a WRITE whose edges only
 * partly cover a block first reads that block (read-modify-write, under the file's edge lock). Buffered files take
 * any alignment.
 * <p>
 * Nothing is reported complete that did not land: the file is checked to be at least as long as the region before
 * each request (a truncated file fails with {@link TransferStatus#STORAGE_TRUNCATED} and is not regrown), a read that
 * comes back short means the same, a failed operation stops the request with its errno's status
 * ({@link StorageStatus}), and a WRITE to a sync region completes only after an fdatasync. One thread only.
 */
public final class StorageIo implements IoUring.CompletionHandler, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StorageIo.class);
    public static final int DEFAULT_QUEUE_DEPTH = 32;
    public static final int MAX_OPERATION = 1 << 20;
    private static final int BLOCK = StorageFile.BLOCK;
    private static final long FSYNC_SLOT = -1L;
    private static final long CANCEL_SLOT = -2L;
    /**
     * How long a request waits without any completion before it cancels what it has in flight: a device or file
     * system that never completes an operation must not hold this thread, and every request queued behind it, for
     * ever.
     */
    public static final long STALL_NANOS = 10_000_000_000L;
    // the whole address space, to copy between raw addresses without making a segment per copy
    @SuppressWarnings("restricted")
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private final int queueDepth;
    private final long stallNanos;
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final AtomicCounter errors;
    private final AtomicCounter syncs;
    private final long[] slotFileOffset;
    private final long[] slotAddress;
    private final int[] slotRemaining;
    private final int[] freeSlots;
    private IoUring ring;
    private Arena bounceArena;
    private MemorySegment bounce;
    private int freeCount;
    private int inFlight;
    private int firstErrno;
    private boolean endOfFile;
    private boolean writing;
    private int fd;
    private int fsyncResult;
    private long progressAt;
    private boolean cancelSent;

    /**
     * @param queueDepth the most operations in flight (the io_uring's submission entries).
     */
    public StorageIo(
        final int queueDepth, final AtomicCounter bytesRead, final AtomicCounter bytesWritten,
        final AtomicCounter errors)
    {
        this(queueDepth, bytesRead, bytesWritten, errors, null);
    }

    /**
     * @param syncs counts the fdatasyncs of sync regions (null: not counted).
     */
    public StorageIo(
        final int queueDepth, final AtomicCounter bytesRead, final AtomicCounter bytesWritten,
        final AtomicCounter errors, final AtomicCounter syncs)
    {
        this(queueDepth, bytesRead, bytesWritten, errors, syncs, STALL_NANOS);
    }

    /**
     * @param stallNanos how long a request waits without a completion before it cancels its operations.
     */
    StorageIo(
        final int queueDepth, final AtomicCounter bytesRead, final AtomicCounter bytesWritten,
        final AtomicCounter errors, final AtomicCounter syncs, final long stallNanos)
    {
        this.stallNanos = stallNanos;
        this.syncs = syncs;
        if (queueDepth < 1 || queueDepth > 4096)
        {
            throw new IllegalArgumentException("storage queue depth must be in 1..4096: " + queueDepth);
        }
        this.queueDepth = queueDepth;
        this.bytesRead = bytesRead;
        this.bytesWritten = bytesWritten;
        this.errors = errors;
        this.slotFileOffset = new long[queueDepth];
        this.slotAddress = new long[queueDepth];
        this.slotRemaining = new int[queueDepth];
        this.freeSlots = new int[queueDepth];
    }

    /**
     * Copies {@code length} bytes of the region from {@code regionOffset} to memory at {@code address}.
     *
     * @return {@link TransferStatus#OK} or a storage status.
     */
    public int read(final StorageFile file, final long regionOffset, final long address, final long length)
    {
        return count(guarded(false, file, regionOffset, address, length), file, false, length);
    }

    /**
     * Copies {@code length} bytes of memory at {@code address} into the region at {@code regionOffset}.
     *
     * @return {@link TransferStatus#OK} once they are in the file (and synced, for a sync region), or a storage status.
     */
    public int write(final StorageFile file, final long regionOffset, final long address, final long length)
    {
        return count(guarded(true, file, regionOffset, address, length), file, true, length);
    }

    private int count(final int status, final StorageFile file, final boolean write, final long length)
    {
        file.onCompleted(write, length, status == TransferStatus.OK);
        if (status == TransferStatus.OK)
        {
            (write ? bytesWritten : bytesRead).getAndAdd(length);
        }
        else
        {
            errors.increment();
        }
        return status;
    }

    /**
     * An io_uring that cannot be set up or entered (out of locked memory, a kernel refusing) fails the request with
     * a storage status, not the thread.
     */
    private int guarded(
        final boolean write, final StorageFile file, final long regionOffset, final long address, final long length)
    {
        try
        {
            return transfer(write, file, regionOffset, address, length);
        }
        catch (final NativeException ex)
        {
            LOG.warn("storage {} of {} bytes at {} of {} failed: {}", write ? "write" : "read", length, regionOffset,
                file, ex.getMessage());
            if (ring != null)
            {
                // operations may still be in flight on it: this ring is not trusted again
                ring.close();
                ring = null;
            }
            return TransferStatus.STORAGE_IO_ERROR;
        }
    }

    private int transfer(
        final boolean write, final StorageFile file, final long regionOffset, final long address, final long length)
    {
        if (regionOffset < 0 || length <= 0 || regionOffset > file.length() - length)
        {
            return TransferStatus.STORAGE_OUT_OF_RANGE;
        }
        final long size = FileIo.size(file.fd());
        if (size < 0)
        {
            return StorageStatus.of((int)-size);
        }
        if (size < file.end())
        {
            return TransferStatus.STORAGE_TRUNCATED;
        }
        final long fileOffset = file.fileOffset() + regionOffset;
        final int status;
        if (!file.direct() || ((fileOffset | address | length) & (BLOCK - 1)) == 0)
        {
            status = pipelined(write, file.fd(), fileOffset, address, length);
        }
        else if (write)
        {
            synchronized (file.edgeLock())
            {
                status = writeThroughBounce(file.fd(), fileOffset, address, length);
            }
        }
        else
        {
            status = readThroughBounce(file.fd(), fileOffset, address, length);
        }
        if (status == TransferStatus.OK && write && file.sync())
        {
            return fdatasync(file.fd());
        }
        return status;
    }

    private int readThroughBounce(final int fd, final long fileOffset, final long address, final long length)
    {
        final MemorySegment buffer = bounce();
        final long end = fileOffset + length;
        for (long chunkStart = fileOffset & -BLOCK; chunkStart < end; chunkStart += MAX_OPERATION)
        {
            final long chunkEnd = Math.min(roundUp(end), chunkStart + MAX_OPERATION);
            final int status = pipelined(false, fd, chunkStart, buffer.address(), chunkEnd - chunkStart);
            if (status != TransferStatus.OK)
            {
                return status;
            }
            final long from = Math.max(fileOffset, chunkStart);
            final long to = Math.min(end, chunkEnd);
            MemorySegment.copy(buffer, from - chunkStart, ALL, address + (from - fileOffset), to - from);
        }
        return TransferStatus.OK;
    }

    private int writeThroughBounce(final int fd, final long fileOffset, final long address, final long length)
    {
        final MemorySegment buffer = bounce();
        final long end = fileOffset + length;
        for (long chunkStart = fileOffset & -BLOCK; chunkStart < end; chunkStart += MAX_OPERATION)
        {
            final long chunkEnd = Math.min(roundUp(end), chunkStart + MAX_OPERATION);
            final long from = Math.max(fileOffset, chunkStart);
            final long to = Math.min(end, chunkEnd);
            // edges the request covers only partly keep the file's bytes: read those blocks first
            if (from > chunkStart)
            {
                final int status = pipelined(false, fd, chunkStart, buffer.address(), BLOCK);
                if (status != TransferStatus.OK)
                {
                    return status;
                }
            }
            if (to < chunkEnd && (chunkEnd - BLOCK >= from || from == chunkStart))
            {
                final int status =
                    pipelined(false, fd, chunkEnd - BLOCK, buffer.address() + (chunkEnd - BLOCK - chunkStart), BLOCK);
                if (status != TransferStatus.OK)
                {
                    return status;
                }
            }
            MemorySegment.copy(ALL, address + (from - fileOffset), buffer, from - chunkStart, to - from);
            final int status = pipelined(true, fd, chunkStart, buffer.address(), chunkEnd - chunkStart);
            if (status != TransferStatus.OK)
            {
                return status;
            }
        }
        return TransferStatus.OK;
    }

    /**
     * Moves [fileOffset, fileOffset + length) with up to {@link #queueDepth} operations in flight; a short operation
     * is resubmitted for the rest, a read that reaches the end of the file fails the request. Package-private: tests
     * drive it on descriptors that never complete.
     */
    int pipelined(
        final boolean write, final int fd, final long fileOffset, final long address, final long length)
    {
        final IoUring ring = ring();
        this.writing = write;
        this.fd = fd;
        firstErrno = 0;
        endOfFile = false;
        inFlight = 0;
        startWaiting();
        freeCount = queueDepth;
        for (int i = 0; i < queueDepth; i++)
        {
            freeSlots[i] = i;
        }
        long next = 0;
        while (next < length || inFlight > 0)
        {
            while (next < length && freeCount > 0 && firstErrno == 0 && !endOfFile)
            {
                final int slot = freeSlots[--freeCount];
                final int chunk = (int)Math.min(MAX_OPERATION, length - next);
                slotFileOffset[slot] = fileOffset + next;
                slotAddress[slot] = address + next;
                slotRemaining[slot] = chunk;
                prepare(ring, slot);
                inFlight++;
                next += chunk;
            }
            if (inFlight == 0)
            {
                break; // failed before the rest was submitted
            }
            awaitCompletion(ring);
        }
        if (firstErrno != 0)
        {
            return StorageStatus.of(firstErrno);
        }
        return endOfFile ? TransferStatus.STORAGE_TRUNCATED : TransferStatus.OK;
    }

    private void prepare(final IoUring ring, final int slot)
    {
        final boolean prepared = writing ?
            ring.prepareWrite(fd, slotAddress[slot], slotRemaining[slot], slotFileOffset[slot], slot) :
            ring.prepareRead(fd, slotAddress[slot], slotRemaining[slot], slotFileOffset[slot], slot);
        if (!prepared)
        {
            throw new IllegalStateException("io_uring full with " + inFlight + " of " + queueDepth + " in flight");
        }
    }

    private void startWaiting()
    {
        progressAt = System.nanoTime();
        cancelSent = false;
    }

    /**
     * Submits what is prepared, waits for a completion and reaps what is ready. After {@link #stallNanos} without
     * any, the request fails ({@code ETIMEDOUT}) and its operations are cancelled: their cancelled completions end
     * the wait. Operations the device already has cannot be cancelled; the thread then goes on waiting for them,
     * saying so in the log, because the memory they read or write may not be given back before they end.
     */
    private void awaitCompletion(final IoUring ring)
    {
        ring.submitAndWait(1, stallNanos);
        final int reaped = ring.reap(this);
        final long now = System.nanoTime();
        if (reaped > 0 || now - progressAt < stallNanos)
        {
            if (reaped > 0)
            {
                progressAt = now;
            }
            return;
        }
        progressAt = now;
        if (cancelSent)
        {
            LOG.error("storage: the kernel still holds {} operation(s) on fd {} {} ms after cancelling them",
                Math.max(inFlight, 1), fd, stallNanos / 1_000_000);
            return;
        }
        cancelSent = true;
        if (firstErrno == 0)
        {
            firstErrno = Errno.ETIMEDOUT; // nothing is resubmitted from here on
        }
        LOG.warn("storage: no completion on fd {} for {} ms, cancelling {} operation(s)", fd,
            stallNanos / 1_000_000, Math.max(inFlight, 1));
        if (!ring.prepareCancelAll(CANCEL_SLOT))
        {
            ring.submit();
            ring.prepareCancelAll(CANCEL_SLOT);
        }
    }

    @Override
    public void onCompletion(final long userData, final int result)
    {
        if (userData == FSYNC_SLOT)
        {
            fsyncResult = result;
            return;
        }
        if (userData == CANCEL_SLOT)
        {
            // -EINVAL: a kernel before 5.19 has no cancel-any, the wait goes on without a bound (-ENOENT: all ended)
            if (result < 0 && result != -Errno.ENOENT)
            {
                LOG.error("storage: the kernel refused to cancel the operations on fd {} (errno {})", fd, -result);
            }
            return; // otherwise the cancelled operations' own completions say how each ended
        }
        final int slot = (int)userData;
        if (result < 0 || (result == 0 && writing))
        {
            if (firstErrno == 0)
            {
                firstErrno = result < 0 ? -result : Errno.EIO;
            }
        }
        else if (result == 0)
        {
            endOfFile = true;
        }
        else if (result < slotRemaining[slot] && firstErrno == 0 && !endOfFile)
        {
            slotFileOffset[slot] += result;
            slotAddress[slot] += result;
            slotRemaining[slot] -= result;
            prepare(ring, slot);
            return;
        }
        else if (result < slotRemaining[slot])
        {
            // the request already failed: the rest of this operation is not worth resubmitting
            endOfFile |= firstErrno == 0;
        }
        freeSlots[freeCount++] = slot;
        inFlight--;
    }

    private int fdatasync(final int fd)
    {
        final IoUring ring = ring();
        if (syncs != null)
        {
            syncs.increment();
        }
        fsyncResult = 1;
        this.fd = fd;
        startWaiting();
        ring.prepareFsync(fd, true, FSYNC_SLOT);
        while (fsyncResult == 1)
        {
            awaitCompletion(ring);
        }
        return fsyncResult == 0 ? TransferStatus.OK : StorageStatus.of(-fsyncResult);
    }

    private IoUring ring()
    {
        if (ring == null)
        {
            ring = IoUring.open(queueDepth);
        }
        return ring;
    }

    private MemorySegment bounce()
    {
        if (bounce == null)
        {
            bounceArena = Arena.ofShared();
            bounce = bounceArena.allocate(MAX_OPERATION, BLOCK);
        }
        return bounce;
    }

    private static long roundUp(final long offset)
    {
        return (offset + BLOCK - 1) & -BLOCK;
    }

    @Override
    public void close()
    {
        if (ring != null)
        {
            ring.close();
            ring = null;
        }
        if (bounceArena != null)
        {
            bounceArena.close();
            bounceArena = null;
            bounce = null;
        }
    }
}
