package io.xferd.client;

import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.NotificationFlyweight;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.IoUtil;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The daemon's side of one client, in this process and single-threaded, with real kernel objects: a listening Unix
 * socket in the test's directory (its accepted end answers control requests; answers are queued before the client
 * asks, so nothing blocks), the client's rings file as a memfd mapped a second time (this side writes completions
 * and reads the submit ring), and a cnc.dat whose heartbeat the test moves.
 */
final class FakeDaemon implements AutoCloseable
{
    static final int COMPLETION_RING_LENGTH = RingsFileDescriptor.ringLength(64 * 1024);
    static final int SUBMIT_RING_LENGTH = RingsFileDescriptor.ringLength(64 * 1024);
    static final long LIVENESS_TIMEOUT_MS = 5_000;
    static final long CONTROL_TIMEOUT_MS = 5_000;

    private final Path directory;
    private final UnixSocket listener;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment frameSegment = arena.allocate(ControlFrame.MAX_FRAME_LENGTH, 8);
    private final UnsafeBuffer frameBuffer = new UnsafeBuffer(frameSegment.address(), ControlFrame.MAX_FRAME_LENGTH);
    private final ControlFrame frame = new ControlFrame();
    private final int[] fdHolder = new int[1];
    private final int ringsFd;
    private final MemorySegment ringsMapping;
    private final RingBuffer completionRing;
    private final RingBuffer submitRing;
    private final CompletionFlyweight completion = new CompletionFlyweight();
    private final NotificationFlyweight notification = new NotificationFlyweight();
    private final SubmitRequestFlyweight requestRecord = new SubmitRequestFlyweight();
    private final SubmitBatchFlyweight batchRecord = new SubmitBatchFlyweight();
    private final MessageHandler answerHandler = this::answer;
    private int answerStatus;
    private String helloName;
    private final MappedByteBuffer cncMapping;
    private final UnsafeBuffer cnc;
    private UnixSocket connection;
    private int receivedFd = -1;

    FakeDaemon(final Path directory, final long nowMs)
    {
        this.directory = directory;
        listener = UnixSocket.listen(directory.resolve(CncFileDescriptor.SOCKET_FILE), 4);
        final long ringsLength = RingsFileDescriptor.fileLength(COMPLETION_RING_LENGTH, SUBMIT_RING_LENGTH);
        ringsFd = Memfd.create("fake-daemon-rings");
        Memfd.truncate(ringsFd, ringsLength);
        ringsMapping = MappedMemory.mapShared(ringsFd, 0, ringsLength);
        final UnsafeBuffer rings = new UnsafeBuffer(ringsMapping.address(), (int)ringsLength);
        completionRing = new ManyToOneRingBuffer(RingsFileDescriptor.completionRing(rings, COMPLETION_RING_LENGTH));
        submitRing = new OneToOneRingBuffer(
            RingsFileDescriptor.submitRing(rings, COMPLETION_RING_LENGTH, SUBMIT_RING_LENGTH));
        final int countersLength = 4096;
        cncMapping = IoUtil.mapNewFile(directory.resolve(CncFileDescriptor.CNC_FILE).toFile(),
            CncFileDescriptor.fileLength(countersLength));
        cnc = new UnsafeBuffer(cncMapping);
        CncFileDescriptor.writeHeader(cnc, countersLength, ProcessHandle.current().pid(), nowMs,
            LIVENESS_TIMEOUT_MS);
    }

    Path directory()
    {
        return directory;
    }

    /**
     * Connect a control proxy and accept its connection: the kernel completes a Unix connect before accept.
     */
    DaemonProxy connectProxy()
    {
        final DaemonProxy proxy = DaemonProxy.connect(directory.resolve(CncFileDescriptor.SOCKET_FILE),
            CONTROL_TIMEOUT_MS);
        connection = listener.accept();
        return proxy;
    }

    /**
     * What WELCOME gives a client whose rings are this daemon's rings file; the descriptor is a duplicate the
     * client owns (received over the socket).
     */
    void queueWelcome(final int maxInFlight, final int maxBatchEntries)
    {
        begin(ControlMessages.WELCOME)
            .putInt(ControlMessages.WELCOME_CLIENT_SLOT, 3)
            .putInt(ControlMessages.WELCOME_MAX_IN_FLIGHT, maxInFlight)
            .putLong(ControlMessages.WELCOME_SEGMENT_HANDLE, 0x5E6L)
            .putInt(ControlMessages.WELCOME_COMPLETION_RING_LENGTH, COMPLETION_RING_LENGTH)
            .putLong(ControlMessages.WELCOME_MAX_REQUEST_LENGTH, 1L << 30)
            .putInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH, SUBMIT_RING_LENGTH)
            .putInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES, maxBatchEntries)
            .putInt(ControlMessages.WELCOME_SEGMENT_RPC_PORT, 0)
            .putString(ControlMessages.WELCOME_SEGMENT_NAME, "127.0.0.1:12001/prefill-0");
        send(ringsFd);
    }

    /**
     * A client connected through {@link XferClient}'s own wiring, WELCOME already answered; HELLO is taken off the
     * socket.
     */
    XferClient connectClient(final ClientContext context, final int maxInFlight, final int maxBatchEntries)
    {
        final DaemonProxy proxy = connectProxy();
        queueWelcome(maxInFlight, maxBatchEntries);
        final XferClient client = new XferClient(context.directory(directory), proxy);
        helloName = receive().getString(ControlMessages.HELLO_NAME);
        return client;
    }

    /**
     * @return the segment name the last client connected through {@link #connectClient} said HELLO with.
     */
    String helloName()
    {
        return helloName;
    }

    /**
     * Complete every request waiting on the submit ring with {@code status}: a SUBMIT with its length, a
     * SUBMIT_BATCH with its entries' total, when OK. Allocation-free.
     *
     * @return requests answered.
     */
    int answerSubmits(final int status)
    {
        return answerSubmits(status, Integer.MAX_VALUE);
    }

    /**
     * As {@link #answerSubmits(int)}, for at most {@code limit} requests.
     */
    int answerSubmits(final int status, final int limit)
    {
        answerStatus = status;
        int answered = 0;
        // a read stops at the end of the ring's buffer: read again for the records past the wrap
        while (answered < limit && submitRing.size() > 0)
        {
            answered += submitRing.read(answerHandler, limit - answered);
        }
        return answered;
    }

    private void answer(final int type, final org.agrona.MutableDirectBuffer buffer, final int index, final int length)
    {
        final long requestId;
        long bytes = 0;
        if (type == RecordTypes.SUBMIT)
        {
            requestRecord.wrap(buffer, index);
            requestId = requestRecord.requestId();
            bytes = requestRecord.length();
        }
        else
        {
            batchRecord.wrap(buffer, index);
            requestId = batchRecord.requestId();
            final int notifyLength = batchRecord.notifyLength();
            for (int i = 0; i < batchRecord.entryCount(); i++)
            {
                bytes += buffer.getLong(batchRecord.entryOffset(notifyLength, i) +
                    SubmitBatchFlyweight.ENTRY_LENGTH_OFFSET);
            }
        }
        complete(requestId, answerStatus, answerStatus == 0 ? bytes : 0);
    }

    /**
     * The client's view of the rings file, mapped from a duplicate descriptor as a client maps the one WELCOME
     * passes.
     */
    ClientRings mapClientRings()
    {
        return ClientRings.map(ringsFd, COMPLETION_RING_LENGTH, SUBMIT_RING_LENGTH);
    }

    ControlFrame begin(final int type)
    {
        return frame.wrap(frameBuffer, 0).begin(type);
    }

    /**
     * Send the frame begun with {@link #begin}, with {@code fd} attached when {@code >= 0}.
     */
    void send(final int fd)
    {
        final int length = frame.length();
        final int sent = fd >= 0 ?
            connection.sendWithFd(frameSegment, 0, length, fd) : connection.send(frameSegment, 0, length);
        if (sent != length)
        {
            throw new IllegalStateException("sent " + sent + " of " + length);
        }
    }

    void queueOk(final long correlationId, final long value)
    {
        begin(ControlMessages.OK)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putLong(ControlMessages.OK_VALUE, value);
        send(-1);
    }

    void queueError(final long correlationId, final int code, final String message)
    {
        begin(ControlMessages.ERROR)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putInt(ControlMessages.ERROR_CODE, code)
            .putString(ControlMessages.ERROR_MESSAGE, message);
        send(-1);
    }

    /**
     * Read the next request the client sent (blocking; the test's timeout bounds it). A descriptor that came with it
     * is kept for {@link #takeReceivedFd}.
     */
    ControlFrame receive()
    {
        readFully(0, ControlFrame.HEADER_LENGTH);
        final int length = ControlFrame.frameLength(frameBuffer, 0);
        readFully(ControlFrame.HEADER_LENGTH, length - ControlFrame.HEADER_LENGTH);
        return frame.wrap(frameBuffer, 0);
    }

    /**
     * @return whether the client sent anything not yet read (without waiting; takes what it finds).
     */
    boolean hasUnreadRequest()
    {
        connection.configureBlocking(false);
        try
        {
            return connection.receive(frameSegment, 0, 1) > 0;
        }
        finally
        {
            connection.configureBlocking(true);
        }
    }

    int takeReceivedFd()
    {
        final int fd = receivedFd;
        receivedFd = -1;
        return fd;
    }

    /**
     * Close the daemon's end of the control connection, as a daemon that exits does.
     */
    void closeConnection()
    {
        connection.close();
    }

    /**
     * Look at the records waiting on the client's submit ring, leaving them there.
     */
    void readSubmitRingWithoutTaking(final MessageHandler handler)
    {
        final UnsafeBuffer ring = (UnsafeBuffer)submitRing.buffer();
        final int capacity = submitRing.capacity();
        final int trailer = capacity;
        long head = ring.getLongVolatile(trailer + RingsFileDescriptor.HEAD_OFFSET);
        final long tail = ring.getLongVolatile(trailer + RingsFileDescriptor.TAIL_OFFSET);
        while (head < tail)
        {
            final int offset = (int)(head & (capacity - 1));
            final int length = ring.getIntVolatile(offset);
            final int type = ring.getInt(offset + 4);
            if (type != RingsFileDescriptor.PADDING_TYPE)
            {
                handler.onMessage(type, ring, offset + RingsFileDescriptor.RECORD_HEADER_LENGTH,
                    length - RingsFileDescriptor.RECORD_HEADER_LENGTH);
            }
            head += (length + RingsFileDescriptor.RECORD_ALIGNMENT - 1) & -RingsFileDescriptor.RECORD_ALIGNMENT;
        }
    }

    /**
     * @return records taken from the client's submit ring.
     */
    int readSubmitRing(final MessageHandler handler)
    {
        return submitRing.read(handler);
    }

    void complete(final long requestId, final int status, final long bytes)
    {
        final int index = completionRing.tryClaim(RecordTypes.COMPLETION, CompletionFlyweight.LENGTH);
        if (index <= 0)
        {
            throw new IllegalStateException("completion ring full");
        }
        completion.wrap(completionRing.buffer(), index).requestId(requestId).status(status).bytesTransferred(bytes)
            .intakeNanos(0).completeNanos(0);
        completionRing.commit(index);
    }

    void notify(final String source, final String message, final long traceId)
    {
        final byte[] sourceBytes = source.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer messageBytes = new UnsafeBuffer(message.getBytes(StandardCharsets.UTF_8));
        final int index = completionRing.tryClaim(RecordTypes.NOTIFICATION,
            NotificationFlyweight.recordLength(sourceBytes.length, messageBytes.capacity()));
        notification.wrap(completionRing.buffer(), index)
            .encode(traceId, sourceBytes, messageBytes, 0, messageBytes.capacity());
        completionRing.commit(index);
    }

    UnsafeBuffer cnc()
    {
        return cnc;
    }

    void heartbeat(final long nowMs)
    {
        CncFileDescriptor.heartbeatMs(cnc, nowMs);
    }

    private void readFully(final int offset, final int length)
    {
        int read = 0;
        while (read < length)
        {
            final int n = connection.receiveWithFd(frameSegment, offset + read, length - read, fdHolder);
            if (n <= 0)
            {
                throw new IllegalStateException("client closed the control connection");
            }
            if (fdHolder[0] >= 0)
            {
                receivedFd = fdHolder[0];
            }
            read += n;
        }
    }

    @Override
    public void close()
    {
        if (connection != null)
        {
            connection.close();
        }
        listener.close();
        if (receivedFd >= 0)
        {
            Memfd.close(receivedFd);
        }
        MappedMemory.unmap(ringsMapping);
        Memfd.close(ringsFd);
        IoUtil.unmap(cncMapping);
        arena.close();
    }
}
