package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.memory.MappedFault;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.storage.StorageFile;
import io.xferd.daemon.storage.StorageStage;
import io.xferd.daemon.storage.StorageStatus;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.MappedMemory;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The file side of one peer connection's serving thread: a peer's READ of a file region and its WRITE into one go
 * to the daemon's {@link StorageStage} through one of the connection's {@link FileAnswers} buffers, and their answers
 * wait in the connection's {@link BufferedChannel} while the thread serves the next requests. A READ is read into
 * the buffer and sent from it; a WRITE's payload is received into the buffer and acknowledged only once the stage
 * has written it (and, for a sync region, once the fdatasync covering it returned). Each answer leaves as soon as
 * it is done (to a peer that matches answers by id) or as soon as it and those before it are done (to one that
 * does not), so the device reads ahead of the socket by as many buffers as the peer keeps slices in flight, up to
 * the pool's bound.
 * <p>
 * A READ of a file whose pages are always in memory (on tmpfs: {@link StorageFile#pageCacheBytes}) and a WRITE into
 * one skip the stage: the connection's thread serves them as a memory region's, between the socket and a mapping of
 * the file's pages, so a READ's answer leaves with the answers around it in one gathering write (no thread crossed,
 * no buffer, one system call for several answers; {@code sendfile} cost two per answer, the header's and its own).
 * <p>
 * What the stage cannot take stays with the caller (synchronous, through the thread's staging buffer): a slice
 * larger than a buffer, an O_DIRECT file addressed off its 4 KiB blocks (the read-modify-write of partial blocks is
 * {@code StorageIo}'s), a connection without buffers once the daemon's {@link FileBufferBudget} is spent, or no
 * stage at all.
 */
final class FileSegmentResponder implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(FileSegmentResponder.class);
    // a full submission queue in the stage (4096 requests of every caller) drains in microseconds: how long a WRITE,
    // whose payload is already read off the socket, keeps trying before it fails typed
    private static final long SUBMIT_PATIENCE_NANOS = 1_000_000_000L;

    private final BufferedChannel channel;
    private final Supplier<StorageStage> stage;
    private final FileAnswers answers;
    // the daemon's storage totals, which READs sent from the page cache count as the stage counts its own
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final AtomicCounter bytesSent;
    // the connection thread's windows: READ answers queued (held until sent), and the WRITE being received
    private final RegionWindows answerWindows;
    private final RegionWindows landing;
    // mincore's answer for 4 MiB of pages a call (hasHole)
    private final MemorySegment residency = Arena.ofAuto().allocate(1024);
    private final AtomicCounter errors;

    /**
     * @param stage    the daemon's storage stage, or null when it has none (asked per request: it is set after start).
     * @param answers  the connection's pool of file answers.
     * @param counters the daemon's: storage bytes read and written, storage errors, and the bytes of READs
     *                 answered to peers.
     * @param answerWindows the connection's windows for READ answers waiting to be sent (shared with its memory
     *                      answers: together they hold at most one per queued answer).
     * @param landing  the connection's window for a WRITE's payload being received.
     */
    FileSegmentResponder(
        final BufferedChannel channel, final Supplier<StorageStage> stage, final FileAnswers answers,
        final SystemCounters counters, final RegionWindows answerWindows, final RegionWindows landing)
    {
        this.channel = channel;
        this.stage = stage;
        this.answers = answers;
        this.answerWindows = answerWindows;
        this.landing = landing;
        this.bytesRead = counters.get(SystemCounter.STORAGE_BYTES_READ);
        this.bytesWritten = counters.get(SystemCounter.STORAGE_BYTES_WRITTEN);
        this.bytesSent = counters.get(SystemCounter.REMOTE_BYTES_SENT);
        this.errors = counters.get(SystemCounter.STORAGE_ERRORS);
        channel.fileAnswersFrom(answers);
    }

    /** The most all connections of a daemon hold in file buffers together. */
    static final long DAEMON_BUDGET_BYTES = 256L << 20;
    /**
     * The most one connection holds in file buffers: a peer's whole window (64 slices) of 1 MiB slices, so the
     * device can read ahead of the socket by as much as the peer asks.
     */
    static final long CONNECTION_BUDGET_BYTES = 64L << 20;

    /**
     * @return how many file answers a connection may hold for {@code bufferSize}-byte slices within
     * {@code budgetBytes}: at least one, at most what the channel can queue.
     */
    static int answerCount(final int bufferSize, final long budgetBytes)
    {
        return (int)Math.min(BufferedChannel.MAX_ANSWERS - 1, Math.max(1, budgetBytes / bufferSize));
    }

    /**
     * A READ of {@code length} bytes of a file region at the owner's {@code address}; the region is borrowed.
     *
     * @return true when the stage took it (the answer is queued and owns the borrow from here), false when the
     * caller serves it.
     * @throws IOException when the connection failed (nothing was submitted; the borrow is still the caller's).
     */
    boolean read(final long sliceId, final Region region, final long address, final long length) throws IOException
    {
        final StorageStage current = stage.get();
        if (current == null || !fits(region, address, length))
        {
            return false;
        }
        final FileAnswer answer = freeAnswer();
        if (answer == null)
        {
            return false;
        }
        try
        {
            channel.nextAnswerHeader(); // room for the answer now: queuing it after the submission cannot fail
        }
        catch (final IOException | RuntimeException ex)
        {
            answers.give(answer);
            throw ex;
        }
        answer.of(sliceId, region, (int)length, false).request
            .set(region.file(), false, region.offsetOf(address), answer.buffer.address(), length);
        if (!current.submit(answer.request))
        {
            answer.abandon();
            answers.give(answer);
            return false;
        }
        channel.answerFile(answer);
        bytesSent.getAndAdd(length); // counted when queued, whatever the stage then answers (as before)
        return true;
    }

    /**
     * @return the region's bytes in the file's pages when a peer's READ ({@code write} false) or WRITE of it is
     * served as a memory region's ({@link #answerFromPages}, {@link #receiveIntoPages}): a file on tmpfs, mapped
     * writable for a WRITE. Null when it goes through {@link #read} or {@link #write}.
     */
    static MemorySegment pagesOf(final Region region, final boolean write)
    {
        final StorageFile file = region.file();
        final MemorySegment pages = file.pageCacheBytes();
        return pages != null && (!write || file.pageCacheWritable()) ? pages : null;
    }

    /**
     * A READ of a file on tmpfs, answered as a memory region's: its size checked (a file truncated under its region
     * is answered {@link TransferStatus#STORAGE_TRUNCATED}, the connection goes on), then {@code header} and a
     * window onto the file's pages queued together, to leave with the answers around them in one gathering write.
     * A slice over a hole of a sparse file is left to the stage: a fault on a hole of a tmpfs mapping allocates its
     * page (and fails on a full tmpfs), where a read returns zeros.
     *
     * @param header the answer's header, taken before the region was borrowed.
     * @return true when answered: the borrow is the channel's from here (released once the bytes have left, or by
     * its discard), or was released; false (a hole) when the caller serves it, the borrow still the caller's.
     */
    boolean answerFromPages(
        final ByteBuffer header, final MemorySegment pages, final long sliceId, final Region region,
        final long address, final long length) throws IOException
    {
        final StorageFile storage = region.file();
        final long offset = region.offsetOf(address);
        final ByteBuffer payload;
        try
        {
            final boolean truncated = truncated(storage, false);
            if (!truncated && hasHole(pages, offset, length))
            {
                return false;
            }
            payload = truncated ? null : answerWindows.window(region, pages, offset, length);
        }
        catch (final RuntimeException ex)
        {
            region.release();
            throw ex;
        }
        if (payload == null)
        {
            region.release();
            header.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
                .putLong(sliceId).putInt(TransferStatus.STORAGE_TRUNCATED).putInt(0).putLong(0);
            channel.answer(null, null);
            return true;
        }
        header.putInt(PeerProtocol.ACK_FIELDS_LENGTH + (int)length).putInt(PeerProtocol.ACK)
            .putLong(sliceId).putInt(TransferStatus.OK).putInt(0).putLong(length);
        // counted when queued, so that a peer holding the bytes finds them counted (were the send to fail, the
        // connection breaks and the peer fails the slice)
        bytesRead.getAndAdd(length);
        bytesSent.getAndAdd(length);
        storage.onCompleted(false, length, true);
        channel.answer(payload, region);
        return true;
    }

    /**
     * A WRITE into a file on tmpfs, received as into a memory region: straight from the socket into the file's
     * pages. The bytes are in the file once received (its pages are the file; an fdatasync of tmpfs has nothing to
     * do). A file truncated under its region gets {@link TransferStatus#STORAGE_TRUNCATED}; a hole that tmpfs has
     * no room to fill, {@link TransferStatus#STORAGE_NO_SPACE} (its blocks are allocated first: a fault on a full
     * tmpfs would fail the copy half way); either way the payload is skipped and the connection goes on. The borrow
     * is released here, on every path. The answer to a slice that {@code endsRequest} leaves before the next read
     * from the socket, as a memory region's ({@link BufferedChannel#answerEndingRequest}).
     */
    void receiveIntoPages(
        final MemorySegment pages, final long sliceId, final Region region, final long address, final long length,
        final boolean endsRequest)
        throws IOException
    {
        final StorageFile storage = region.file();
        final long offset = region.offsetOf(address);
        int status = TransferStatus.OK;
        try
        {
            if (truncated(storage, true))
            {
                status = TransferStatus.STORAGE_TRUNCATED;
            }
            else if (hasHole(pages, offset, length))
            {
                final int result = FileIo.allocateKeepingSize(storage.fd(), storage.fileOffset() + offset, length);
                if (result < 0)
                {
                    status = StorageStatus.of(-result);
                    errors.increment();
                    storage.onCompleted(true, 0, false);
                }
            }
            if (status != TransferStatus.OK)
            {
                channel.skip(length);
            }
            else
            {
                // a truncate racing this read fails it: with EFAULT where the kernel copies, with a memory fault where
                // Java copies the bytes read ahead with the header. Either way the connection closes and the peer
                // fails the slice, as when a peer stops mid-frame
                try
                {
                    channel.readFully(landing.window(region, pages, offset, length));
                }
                catch (final InternalError error)
                {
                    if (!MappedFault.is(error))
                    {
                        throw error;
                    }
                    errors.increment();
                    throw new IOException("the file under a storage region was truncated while a WRITE landed in it",
                        error);
                }
                bytesWritten.getAndAdd(length);
                storage.onCompleted(true, length, true);
            }
        }
        finally
        {
            region.release();
        }
        channel.nextAnswerHeader().putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
            .putLong(sliceId).putInt(status).putInt(0).putLong(0);
        if (endsRequest)
        {
            channel.answerEndingRequest(length);
        }
        else
        {
            channel.answer(null, null, length);
        }
    }

    /**
     * @return true when {@code [offset, offset + length)} of the region's pages is not all in memory: a hole of a
     * sparse file (or pages swapped out, or allocated and never written: those read as zeros too). {@code mincore} looks at this range only, where {@code lseek(SEEK_HOLE)}
     * on tmpfs walks the file to its next hole (the whole rest of a file without any: milliseconds per slice).
     */
    private boolean hasHole(final MemorySegment pages, final long offset, final long length)
    {
        return !MappedMemory.allResident(pages.address() + offset, length, residency);
    }

    /**
     * As the storage stage: the file must still cover the whole region, not only this slice (one fstat, no
     * allocation); one that does not counts as an error of the region.
     */
    private boolean truncated(final StorageFile storage, final boolean write)
    {
        final long size = FileIo.size(storage.fd()); // an fstat: the file offset a client may share stays put
        if (size >= storage.end())
        {
            return false;
        }
        errors.increment();
        storage.onCompleted(write, 0, false);
        return true;
    }

    /**
     * A WRITE of {@code length} bytes into a file region at the owner's {@code address}, its payload next on the
     * connection; the region is borrowed.
     *
     * @return true when the payload was received and handed to the stage (the answer is queued, owns the borrow, and
     * carries the write's status once it completed), false when the caller serves it (nothing read).
     * @throws IOException when the connection failed (nothing was submitted; the borrow is still the caller's).
     */
    boolean write(final long sliceId, final Region region, final long address, final long length) throws IOException
    {
        final StorageStage current = stage.get();
        if (current == null || !fits(region, address, length))
        {
            return false;
        }
        final FileAnswer answer = freeAnswer();
        if (answer == null)
        {
            return false;
        }
        answer.of(sliceId, region, (int)length, true).request
            .set(region.file(), true, region.offsetOf(address), answer.buffer.address(), length);
        try
        {
            channel.readFully(answer.bytes());
            channel.nextAnswerHeader(); // room for the answer now: queuing it after the submission cannot fail
        }
        catch (final IOException | RuntimeException ex)
        {
            answer.abandon();
            answers.give(answer);
            throw ex;
        }
        if (!submit(current, answer))
        {
            LOG.warn("the storage stage took no WRITE of {} within {} ms: failed", region,
                SUBMIT_PATIENCE_NANOS / 1_000_000);
            answer.completeWith(TransferStatus.STORAGE_IO_ERROR);
        }
        channel.answerFile(answer);
        return true;
    }

    private boolean submit(final StorageStage current, final FileAnswer answer)
    {
        if (current.submit(answer.request))
        {
            return true;
        }
        final long deadline = System.nanoTime() + SUBMIT_PATIENCE_NANOS;
        while (System.nanoTime() - deadline < 0)
        {
            LockSupport.parkNanos(50_000);
            if (current.submit(answer.request))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * The stage moves a slice only within one buffer, and on an O_DIRECT file only whole 4 KiB blocks (the buffer is
     * block aligned; the file offset and the length must be too).
     */
    private boolean fits(final Region region, final long address, final long length)
    {
        if (length > answers.capacity())
        {
            return false;
        }
        final StorageFile file = region.file();
        final long fileOffset = file.fileOffset() + region.offsetOf(address);
        return !file.direct() || ((fileOffset | length) & (StorageFile.BLOCK - 1)) == 0;
    }

    /**
     * @return a free answer; when every one is queued, the oldest answers are sent first (waiting for the oldest's
     * request) to get one back; null when the connection has none and the daemon's budget is spent.
     */
    private FileAnswer freeAnswer() throws IOException
    {
        FileAnswer answer = answers.take();
        while (answer == null && channel.hasFileAnswers())
        {
            channel.sendOldestAnswers();
            answer = answers.take();
        }
        return answer;
    }

    @Override
    public void close()
    {
        answers.close(); // after the channel's discard(): waits for requests still in flight into its buffers
    }
}
