package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.transport.PeerProtocol;
import org.agrona.concurrent.NanoClock;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.LockSupport;

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
    // ... and at most this many request bytes (a WRITE's payload received, a READ's to send): the peer's window is
    // a few MiB, and answers held until it has all arrived would let it drain before it reopens (the wire idles)
    static final long ANSWER_BATCH_BYTES = 1 << 20;
    private static final long MAX_PENDING_BYTES = 1 << 20;
    // how long the thread sleeps at most, waiting for the oldest file answer, before it looks for input again (a
    // completion wakes it at once)
    private static final long FILE_WAIT_NANOS = 50_000;
    // ... doubling while nothing happens, up to this
    private static final long FILE_WAIT_MAX_NANOS = 400_000;

    private final SocketChannel channel;
    private final ByteBuffer in;
    // answers wait here, each a small header of its own followed by an optional payload view, and leave together
    private final ByteBuffer[] headers;
    private final ByteBuffer[] payloads;
    private final io.xferd.daemon.memory.Region[] borrowed;
    // a READ or WRITE of a file whose bytes the storage stage is still moving: its header is written once done
    private final FileAnswer[] files;
    // the WRITE payload bytes each queued answer answers (towards ANSWER_BATCH_BYTES; kept per answer so that what is
    // left after a partial send is counted again, not forgotten)
    private final long[] writeBytesOf;
    private final ByteBuffer[] gather;
    private FileAnswers filePool;
    // the peer matches answers to requests by id (it said so in its HELLO): a done answer need not wait behind
    // older ones still in the storage stage
    private boolean anyOrder;
    private int headerCount;
    private int fileCount;
    private long pendingBytes;
    // payload bytes of WRITEs whose answers wait in the output buffer (a READ's payload is in pendingBytes)
    private long answeredWriteBytes;
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
        this.writeBytesOf = new long[answers];
        this.files = new FileAnswer[answers];
    }

    /**
     * Where file answers go back once sent.
     */
    void fileAnswersFrom(final FileAnswers pool)
    {
        this.filePool = pool;
    }

    /**
     * From now on, answers leave as soon as each is ready, older ones still in the storage stage or not: the peer
     * matches them to its requests by id ({@code PeerProtocol.FLAG_ANSWERS_BY_ID}).
     */
    void answerInAnyOrder()
    {
        this.anyOrder = true;
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
     * About to read: send the queued answers unless the peer's next bytes are already there (the read will not
     * block, so the answers can wait for the ones it brings) and fewer than {@link #ANSWER_BATCH} wait. With file
     * answers queued, answers leave as their storage requests complete, see {@link #sendAsFilesComplete()}.
     */
    private void flushBeforeBlocking() throws IOException
    {
        if (fileCount > 0)
        {
            sendAsFilesComplete();
        }
        else if (headerCount > 0 && (headerCount >= ANSWER_BATCH ||
            answeredWriteBytes + pendingBytes >= ANSWER_BATCH_BYTES || readable() == 0))
        {
            flush();
        }
    }

    /**
     * File answers are queued: until the peer's next request is readable, send the answers whose requests have
     * completed, in one gathering write (in order: the done front of the queue; in any order: every done answer),
     * and when none can leave, wait for the oldest (in any order: for any) or for input, whichever comes first. The
     * device keeps reading the slices behind it meanwhile, so one slow read holds back at most the answers behind
     * it (in any order: none), never the reads.
     * Returns once every answer has left, or a request is readable (reading it will not block).
     */
    private void sendAsFilesComplete() throws IOException
    {
        long wait = FILE_WAIT_NANOS;
        while (headerCount > 0)
        {
            final int ready = ready();
            // as without file answers: the peer's window reopens only once enough of its WRITEs are answered
            if (ready < ANSWER_BATCH && answeredWriteBytes < ANSWER_BATCH_BYTES && readable() > 0)
            {
                return;
            }
            if (ready > 0)
            {
                send(ready);
                wait = FILE_WAIT_NANOS; // the peer's next requests follow these answers: look for them soon
            }
            else if (!awaitFile(wait) && readable() > 0)
            {
                return;
            }
            else
            {
                // nothing came: while the device works on a slow read, look for input less often (each look is a
                // park and an ioctl; at 50 us that was 30 of each per 1 MiB read on ext4); a completion still
                // wakes the thread at once
                wait = Math.min(wait << 1, FILE_WAIT_MAX_NANOS);
            }
        }
    }

    /**
     * Every answer queued is a file answer still in the storage stage, or all buffers are: send the oldest answer
     * once it is done (waiting for it), and with it every answer done behind it.
     */
    void sendOldestAnswers() throws IOException
    {
        if (headerCount == 0)
        {
            return;
        }
        if (anyOrder)
        {
            int ready;
            while ((ready = ready()) == 0)
            {
                awaitFile(FILE_WAIT_NANOS);
            }
            send(ready);
            return;
        }
        final FileAnswer head = files[0];
        if (head != null)
        {
            head.await();
        }
        send(readyFront());
    }

    /**
     * @return how many answers can leave now, moved to the front of the queue when they may leave in any order
     * (else the done front).
     */
    private int ready()
    {
        if (!anyOrder)
        {
            return readyFront();
        }
        int ready = 0;
        for (int i = 0; i < headerCount; i++)
        {
            final FileAnswer file = files[i];
            if (file == null || file.isDone())
            {
                if (i != ready)
                {
                    swap(i, ready);
                }
                ready++;
            }
        }
        return ready;
    }

    private void swap(final int i, final int j)
    {
        final ByteBuffer header = headers[i];
        headers[i] = headers[j];
        headers[j] = header;
        final ByteBuffer payload = payloads[i];
        payloads[i] = payloads[j];
        payloads[j] = payload;
        final io.xferd.daemon.memory.Region region = borrowed[i];
        borrowed[i] = borrowed[j];
        borrowed[j] = region;
        final FileAnswer file = files[i];
        files[i] = files[j];
        files[j] = file;
        final long bytes = writeBytesOf[i];
        writeBytesOf[i] = writeBytesOf[j];
        writeBytesOf[j] = bytes;
    }

    /**
     * Wait at most {@code nanos} for the oldest answer's storage request (in any order: any queued one) to
     * complete; a completion wakes the thread at once.
     *
     * @return true when an answer can leave now.
     */
    private boolean awaitFile(final long nanos)
    {
        if (!anyOrder)
        {
            return headFileDone(nanos);
        }
        filePool.waiting(Thread.currentThread());
        try
        {
            if (ready() == 0)
            {
                LockSupport.parkNanos(this, nanos);
            }
        }
        finally
        {
            filePool.waiting(null);
        }
        return ready() > 0;
    }

    /**
     * @return how many answers at the front of the queue can leave now (memory answers, and file answers whose
     * storage request completed).
     */
    private int readyFront()
    {
        int ready = 0;
        while (ready < headerCount && (files[ready] == null || files[ready].isDone()))
        {
            ready++;
        }
        return ready;
    }

    private boolean headFileDone(final long waitNanos)
    {
        final FileAnswer head = files[0];
        return head == null || head.awaitFor(waitNanos);
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

    /**
     * @return true while answers to file requests are queued (their storage requests possibly in flight).
     */
    boolean hasFileAnswers()
    {
        return fileCount > 0;
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
            if (fileCount > 0)
            {
                sendOldestAnswers();
            }
            else
            {
                flush();
            }
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
        answer(payload, region, 0);
    }

    /**
     * {@link #answer(ByteBuffer, io.xferd.daemon.memory.Region)} for a request whose {@code writeBytes} of payload
     * were received: they count towards {@link #ANSWER_BATCH_BYTES}.
     */
    void answer(final ByteBuffer payload, final io.xferd.daemon.memory.Region region, final long writeBytes)
        throws IOException
    {
        answeredWriteBytes += writeBytes;
        final int index = headerCount++;
        writeBytesOf[index] = writeBytes;
        payloads[index] = payload;
        borrowed[index] = payload != null ? region : null;
        files[index] = null;
        pendingBytes += headers[index].position() + PeerProtocol.TAG_LENGTH;
        if (payload != null)
        {
            pendingBytes += payload.remaining();
        }
        if (pendingBytes >= MAX_PENDING_BYTES && fileCount == 0)
        {
            flush();
        }
    }

    /**
     * Queue the answer to the WRITE slice that ends its request ({@code writeBytes} of payload received) and send it
     * now, with the answers held before it, whatever is readable: the initiator's client waits for that request (a
     * batch of small requests waits for its last one), and held until the next slice had been read, up to
     * {@link #ANSWER_BATCH_BYTES}, it would wait a slice's wire time more, every request. Answers to slices in the
     * middle of a request are still held, so a stream of large requests keeps its batched answers. With file
     * answers queued it leaves as they do ({@link #sendAsFilesComplete()}).
     */
    void answerEndingRequest(final long writeBytes) throws IOException
    {
        answer(null, null, writeBytes);
        if (fileCount == 0)
        {
            flush();
        }
    }

    /**
     * Queue the answer to a READ or WRITE of a file whose bytes the storage stage is still moving ({@code file}'s
     * request submitted): its header is written when it leaves, OK with a READ's bytes, or with the request's
     * failure. Its region stays borrowed until then.
     */
    void answerFile(final FileAnswer file) throws IOException
    {
        nextAnswerHeader();
        final int index = headerCount++;
        writeBytesOf[index] = file.write ? file.length : 0;
        answeredWriteBytes += writeBytesOf[index];
        payloads[index] = null;
        borrowed[index] = null;
        files[index] = file;
        fileCount++;
    }

    /**
     * Send every queued answer in one gathering write (waiting for file requests still in flight), then release
     * the memory their payloads came from.
     */
    void flush() throws IOException
    {
        for (int i = 0; i < headerCount; i++)
        {
            if (files[i] != null)
            {
                files[i].await();
            }
        }
        send(headerCount);
    }

    /**
     * Send the first {@code count} queued answers (each done) in one gathering write, release what they held and
     * move the rest to the front.
     */
    private void send(final int count) throws IOException
    {
        if (count == 0)
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
            for (int i = 0; i < count; i++)
            {
                final ByteBuffer header = headers[i];
                final FileAnswer file = files[i];
                ByteBuffer payload = payloads[i];
                if (file != null)
                {
                    final int status = file.status();
                    final int length = file.payloadLength();
                    header.clear();
                    header.putInt(PeerProtocol.ACK_FIELDS_LENGTH + length).putInt(PeerProtocol.ACK)
                        .putLong(file.sliceId).putInt(status).putInt(0).putLong(length);
                    payload = length > 0 ? file.bytes() : null;
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
            java.util.Arrays.fill(gather, null);
        }
        // on failure the connection is gone and discard() releases everything queued, sent or not
        release(0, count);
        compact(count);
    }

    private void release(final int from, final int to)
    {
        for (int i = from; i < to; i++)
        {
            if (borrowed[i] != null)
            {
                borrowed[i].release();
                borrowed[i] = null;
            }
            final FileAnswer file = files[i];
            if (file != null)
            {
                // a request still in flight (the connection failed) keeps its buffer until it completes; one the
                // storage stage abandoned never does: it keeps its buffer and its borrow (FileAnswers.close warns)
                if (awaitBounded(file))
                {
                    file.region.release();
                    filePool.give(file);
                }
                files[i] = null;
                fileCount--;
            }
            payloads[i] = null;
        }
    }

    private static boolean awaitBounded(final FileAnswer file)
    {
        final long deadline = System.nanoTime() + FileAnswers.CLOSE_WAIT_NANOS;
        for (long left = FileAnswers.CLOSE_WAIT_NANOS; left > 0; left = deadline - System.nanoTime())
        {
            if (file.awaitFor(left))
            {
                return true;
            }
        }
        return file.isDone();
    }

    /**
     * Move the answers after the first {@code sent} to the front (header buffers swapped, none lost).
     */
    private void compact(final int sent)
    {
        final int left = headerCount - sent;
        for (int i = 0; i < left; i++)
        {
            final ByteBuffer header = headers[i];
            headers[i] = headers[sent + i];
            headers[sent + i] = header;
            payloads[i] = payloads[sent + i];
            borrowed[i] = borrowed[sent + i];
            files[i] = files[sent + i];
            writeBytesOf[i] = writeBytesOf[sent + i];
            payloads[sent + i] = null;
            borrowed[sent + i] = null;
            files[sent + i] = null;
        }
        headerCount = left;
        pendingBytes = 0;
        answeredWriteBytes = 0;
        for (int i = 0; i < left; i++)
        {
            answeredWriteBytes += writeBytesOf[i];
            if (files[i] == null)
            {
                pendingBytes += headers[i].position() + PeerProtocol.TAG_LENGTH +
                    (payloads[i] != null ? payloads[i].remaining() : 0);
            }
        }
    }

    /**
     * Release what queued answers still borrow without sending them (the connection is gone).
     */
    void discard()
    {
        release(0, headerCount);
        java.util.Arrays.fill(gather, null);
        headerCount = 0;
        fileCount = 0;
        pendingBytes = 0;
        answeredWriteBytes = 0;
    }
}
