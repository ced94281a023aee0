package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.transport.PeerProtocol;
import org.agrona.concurrent.NanoClock;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A blocking socket with an input buffer and an output buffer, so that many small frames (headers, answers)
 * cost one system call instead of one each: reads take whatever the socket has, answers wait in the output
 * buffer until the reader would block (nothing more to read now) or {@link #ANSWER_BATCH} of them wait, and only
 * then go out together. Large payloads bypass both buffers:
 * what is already buffered is copied, the rest is read or written straight from or into registered memory;
 * reads run at most {@link #READ_AHEAD} bytes past what was asked for, so that rest is nearly all of it.
 * One reader thread and one writer thread at most.
 */
final class BufferedChannel
{
    static final int MAX_ANSWERS = 64;
    // how far a read may run past the frame asked for: enough for a burst of headers and acks in one call, small
    // enough that a payload following a header is mostly read straight into registered memory, not copied twice
    static final int READ_AHEAD = 8 * 1024;
    // answers held back while the peer's next requests are already readable: fewer, larger writes here and fewer
    // wake-ups of the peer's receiver; few enough that the peer's window (64 slices) never waits on them
    static final int ANSWER_BATCH = 8;
    private static final long MAX_PENDING_BYTES = 1 << 20;

    private final SocketChannel channel;
    private final ByteBuffer in;
    // answers wait here, each a small header of its own followed by an optional payload view, and leave together
    private final ByteBuffer[] headers;
    private final ByteBuffer[] payloads;
    private final io.xferd.daemon.memory.Region[] borrowed;
    // a READ of a file whose bytes the storage stage is still reading: its header is written once they are in
    private final FileReadAnswer[] fileReads;
    private final ByteBuffer[] gather;
    private FileReadAnswers fileReadPool;
    private int headerCount;
    private int fileReadCount;
    private long pendingBytes;
    private long flushes;
    private java.io.InputStream availability;
    private FrameMac answerMac = new FrameMac(null);
    // when the frame being served began, or while answers are being sent, when that began; 0 while waiting for the
    // next frame: a deadline watchdog cuts off a connection that stays busy too long (a stalled peer)
    private volatile long busySinceNanos;
    private final NanoClock clock;

    BufferedChannel(
        final SocketChannel channel, final NanoClock clock, final int inputCapacity, final int answerHeaderLength)
    {
        this.channel = channel;
        this.clock = clock;
        this.in = FrameIo.newBuffer(inputCapacity);
        this.in.flip();
        final int answers = answerHeaderLength > 0 ? MAX_ANSWERS : 0;
        this.headers = new ByteBuffer[answers];
        for (int i = 0; i < answers; i++)
        {
            headers[i] = FrameIo.newBuffer(answerHeaderLength);
        }
        this.gather = new ByteBuffer[2 * answers];
        this.payloads = new ByteBuffer[answers];
        this.borrowed = new io.xferd.daemon.memory.Region[answers];
        this.fileReads = new FileReadAnswer[answers];
    }

    /**
     * Where answered file reads go back once sent.
     */
    void fileReadsFrom(final FileReadAnswers pool)
    {
        this.fileReadPool = pool;
    }

    /**
     * Tag every answer queued from now on with {@code mac} (the session's, once the handshake is done).
     */
    void signAnswersWith(final FrameMac mac)
    {
        this.answerMac = mac;
    }

    /**
     * A frame's header was read: from now until {@link #frameDone()} the connection waits on its peer only for the
     * rest of that frame, which must come within the deadline.
     */
    void frameStarted(final long nowNanos)
    {
        busySinceNanos = nowNanos;
    }

    void frameDone()
    {
        busySinceNanos = 0;
    }

    /**
     * @return when the current frame (or the sending of answers) began, 0 when idle between frames.
     */
    long busySinceNanos()
    {
        return busySinceNanos;
    }

    /**
     * Make {@code length} bytes readable from {@link #input()} (relative gets), reading more only when needed;
     * answers waiting in the output buffer are sent before blocking.
     */
    ByteBuffer require(final int length) throws IOException
    {
        if (in.remaining() < length)
        {
            in.compact();
            in.limit(Math.min(in.capacity(), Math.max(length, READ_AHEAD)));
            while (in.position() < length)
            {
                flushBeforeBlocking();
                if (channel.read(in) < 0)
                {
                    throw new EOFException("peer closed the connection");
                }
            }
            in.flip();
        }
        return in;
    }

    ByteBuffer input()
    {
        return in;
    }

    /**
     * Fill {@code target} (a view of registered memory): buffered bytes first, then straight from the socket.
     */
    void readFully(final ByteBuffer target) throws IOException
    {
        final int buffered = Math.min(in.remaining(), target.remaining());
        if (buffered > 0)
        {
            final int limit = in.limit();
            in.limit(in.position() + buffered);
            target.put(in);
            in.limit(limit);
        }
        // one buffer per read, not a scattering read with the read-ahead behind it (one read fewer per slice): NIO
        // allocates a releaser per call for each buffer over a memory segment in a vectored read or write
        while (target.hasRemaining())
        {
            flushBeforeBlocking();
            if (channel.read(target) < 0)
            {
                throw new EOFException("peer closed the connection");
            }
        }
    }

    /**
     * Wait until the queued file reads have all completed, or the peer has sent more (then those are read first
     * and the answers wait: they go out with the next flush).
     *
     * @return true when input is waiting (reading will not block), false when every file read is done.
     */
    /**
     * About to read: send the queued answers unless the peer's next bytes are already there (the read will not
     * block, so the answers can wait for the ones it brings) and fewer than {@link #ANSWER_BATCH} wait; file reads
     * still in flight wait only while no request is waiting to be read.
     */
    private void flushBeforeBlocking() throws IOException
    {
        if (fileReadCount > 0)
        {
            if (!awaitFileReadsOrInput())
            {
                flush();
            }
        }
        else if (headerCount > 0 && (headerCount >= ANSWER_BATCH || readable() == 0))
        {
            flush();
        }
    }

    /**
     * @return how many bytes wait to be read on the socket (FIONREAD through the socket adaptor, no allocation).
     */
    private int readable() throws IOException
    {
        if (availability == null)
        {
            availability = channel.socket().getInputStream();
        }
        return availability.available();
    }

    /**
     * @return how many gathering writes of answers this channel made (tests).
     */
    long flushes()
    {
        return flushes;
    }

    private boolean awaitFileReadsOrInput() throws IOException
    {
        int index = 0;
        while (true)
        {
            while (index < headerCount && (fileReads[index] == null || fileReads[index].isDone()))
            {
                index++;
            }
            if (index == headerCount)
            {
                return false;
            }
            if (readable() > 0)
            {
                return true;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        }
    }

    /**
     * @return true while answers to file reads are queued (their reads possibly in flight).
     */
    boolean hasFileReads()
    {
        return fileReadCount > 0;
    }

    void skip(final long length) throws IOException
    {
        long left = length;
        while (left > 0)
        {
            final ByteBuffer buffer = require((int)Math.min(left, in.capacity()));
            final int n = (int)Math.min(left, buffer.remaining());
            buffer.position(buffer.position() + n);
            left -= n;
        }
    }

    /**
     * The header buffer for the next answer (cleared); fill it, then {@link #answer}.
     */
    ByteBuffer nextAnswerHeader() throws IOException
    {
        if (headerCount == headers.length)
        {
            flush();
        }
        return headers[headerCount].clear();
    }

    /**
     * Queue the answer whose header {@link #nextAnswerHeader()} returned (filled up to, not including, its tag),
     * with the bytes of a READ when {@code payload} is not null: {@code region} stays borrowed until the bytes
     * have left and is released then. Headers are tagged when they leave, in the order they leave.
     */
    void answer(final ByteBuffer payload, final io.xferd.daemon.memory.Region region) throws IOException
    {
        final int index = headerCount++;
        payloads[index] = payload;
        borrowed[index] = payload != null ? region : null;
        fileReads[index] = null;
        pendingBytes += headers[index].position() + PeerProtocol.TAG_LENGTH;
        if (payload != null)
        {
            pendingBytes += payload.remaining();
        }
        if (pendingBytes >= MAX_PENDING_BYTES && fileReadCount == 0)
        {
            flush();
        }
    }

    /**
     * Queue the answer to a READ of a file whose bytes {@code read} is still reading (submitted to the storage
     * stage): its header is written when it leaves, with the bytes or with the read's failure. Its region stays
     * borrowed until then.
     */
    void answerFileRead(final FileReadAnswer read) throws IOException
    {
        nextAnswerHeader();
        final int index = headerCount++;
        payloads[index] = null;
        borrowed[index] = null;
        fileReads[index] = read;
        fileReadCount++;
    }

    /**
     * Send every queued answer in one gathering write (waiting for file reads still in flight), then release the
     * memory their payloads came from.
     */
    void flush() throws IOException
    {
        if (headerCount == 0)
        {
            return;
        }
        // a peer that stops taking answers keeps READ payloads' regions borrowed: sending is under the deadline too
        final long busySince = busySinceNanos;
        if (busySince == 0)
        {
            busySinceNanos = clock.nanoTime();
        }
        flushes++;
        try
        {
            int gatherCount = 0;
            long remaining = 0;
            for (int i = 0; i < headerCount; i++)
            {
                final ByteBuffer header = headers[i];
                final FileReadAnswer read = fileReads[i];
                ByteBuffer payload = payloads[i];
                if (read != null)
                {
                    final int status = read.await();
                    header.clear();
                    if (status == io.xferd.ipc.TransferStatus.OK)
                    {
                        header.putInt(PeerProtocol.ACK_FIELDS_LENGTH + read.length).putInt(PeerProtocol.ACK)
                            .putLong(read.sliceId).putInt(status).putInt(0).putLong(read.length);
                        payload = read.payload();
                    }
                    else
                    {
                        header.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
                            .putLong(read.sliceId).putInt(status).putInt(0).putLong(0);
                    }
                }
                final int end = header.position();
                answerMac.sign(header.getInt(0), header.getInt(4), header, PeerProtocol.HEADER_LENGTH, end);
                header.position(end + PeerProtocol.TAG_LENGTH);
                header.flip();
                gather[gatherCount++] = header;
                remaining += header.remaining();
                if (payload != null)
                {
                    gather[gatherCount++] = payload;
                    remaining += payload.remaining();
                }
            }
            while (remaining > 0)
            {
                remaining -= channel.write(gather, 0, gatherCount);
            }
        }
        finally
        {
            busySinceNanos = busySince;
            releaseAnswers();
        }
    }

    private void releaseAnswers()
    {
        for (int i = 0; i < headerCount; i++)
        {
            if (borrowed[i] != null)
            {
                borrowed[i].release();
                borrowed[i] = null;
            }
            final FileReadAnswer read = fileReads[i];
            if (read != null)
            {
                // a read still in flight (a flush that failed) keeps its buffer until it completes
                read.await();
                read.region.release();
                fileReadPool.give(read);
                fileReads[i] = null;
            }
            payloads[i] = null;
        }
        java.util.Arrays.fill(gather, null);
        headerCount = 0;
        fileReadCount = 0;
        pendingBytes = 0;
    }

    /**
     * Release what queued answers still borrow without sending them (the connection is gone).
     */
    void discard()
    {
        releaseAnswers();
    }
}
