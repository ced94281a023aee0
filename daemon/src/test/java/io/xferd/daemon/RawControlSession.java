package io.xferd.daemon;

import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.Doorbell;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.Poller;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * A client that speaks the control protocol by hand, without the client library: it says HELLO like any client
 * (so it gets its rings file) and then does what the test wants: control frames of its own making, single requests
 * through its rings ({@link #submitAndAwait}), or any bytes at all written into its own submit ring
 * ({@link #submitRingBuffer()}).
 */
final class RawControlSession implements AutoCloseable
{
    private final Arena arena = Arena.ofShared();
    private final MemorySegment frameMemory = arena.allocate(ControlFrame.MAX_FRAME_LENGTH, 8);
    private final UnsafeBuffer frameBuffer = new UnsafeBuffer(frameMemory.address(), ControlFrame.MAX_FRAME_LENGTH);
    private final Poller poller = new Poller(1);
    private final UnixSocket socket;
    private final Path directory;
    private MemorySegment rings;
    private UnsafeBuffer completionRingBuffer;
    private UnsafeBuffer submitRingBuffer;
    private OneToOneRingBuffer submitRing;
    private int slot;
    private long segmentHandle;
    private int maxBatchEntries;

    private RawControlSession(final UnixSocket socket, final Path directory)
    {
        this.socket = socket;
        this.directory = directory;
    }

    /**
     * Connect and say HELLO as segment {@code name}.
     *
     * @throws AssertionError when the daemon does not WELCOME it.
     */
    static RawControlSession hello(final Path directory, final String name, final Duration timeout)
    {
        final RawControlSession session = connect(directory);
        try
        {
            session.sayHello(name, timeout);
            return session;
        }
        catch (final RuntimeException | AssertionError ex)
        {
            session.close();
            throw ex;
        }
    }

    /**
     * Connect without saying anything yet (the test sends its own first frame with {@link #request}).
     */
    static RawControlSession connect(final Path directory)
    {
        final RawControlSession session =
            new RawControlSession(UnixSocket.connect(directory.resolve(CncFileDescriptor.SOCKET_FILE)), directory);
        session.socket.configureBlocking(false);
        return session;
    }

    private void sayHello(final String name, final Duration timeout)
    {
        final ControlFrame frame = new ControlFrame().wrap(frameBuffer, 0).begin(ControlMessages.HELLO)
            .putInt(ControlMessages.HELLO_VERSION, ControlMessages.PROTOCOL_VERSION)
            .putInt(ControlMessages.HELLO_PID, (int)ProcessHandle.current().pid())
            .putInt(ControlMessages.HELLO_FLAGS, 0)
            .putInt(ControlMessages.HELLO_FLAGS + 4, 0)
            .putString(ControlMessages.HELLO_NAME, name);
        final int length = frame.length();
        final long deadline = System.nanoTime() + timeout.toNanos();
        for (int sent = 0; sent < length; )
        {
            final int n = socket.send(frameMemory, sent, length - sent);
            sent += Math.max(0, n);
            checkDeadline(deadline, "sending HELLO");
        }

        final int[] fd = {-1};
        int ringFd = -1;
        int received = 0;
        while (received < ControlFrame.HEADER_LENGTH || received < ControlFrame.frameLength(frameBuffer, 0))
        {
            checkDeadline(deadline, "waiting for WELCOME");
            awaitReadable(deadline);
            final int n = socket.receiveWithFd(frameMemory, received, ControlFrame.MAX_FRAME_LENGTH - received, fd);
            if (n == 0)
            {
                throw new AssertionError("daemon closed the connection instead of answering HELLO");
            }
            if (fd[0] >= 0)
            {
                ringFd = fd[0];
                fd[0] = -1;
            }
            received += Math.max(0, n);
        }
        final ControlFrame answer = new ControlFrame().wrap(frameBuffer, 0);
        if (ringFd >= 0)
        {
            if (answer.type() == ControlMessages.WELCOME)
            {
                final int completionLength = answer.getInt(ControlMessages.WELCOME_COMPLETION_RING_LENGTH);
                final int submitLength = answer.getInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH);
                rings = MappedMemory.mapShared(ringFd, 0, completionLength + (long)submitLength);
                final UnsafeBuffer whole = new UnsafeBuffer(rings.address(), completionLength + submitLength);
                completionRingBuffer = RingsFileDescriptor.completionRing(whole, completionLength);
                submitRingBuffer = RingsFileDescriptor.submitRing(whole, completionLength, submitLength);
                submitRing = new OneToOneRingBuffer(submitRingBuffer);
            }
            Memfd.close(ringFd);
        }
        if (answer.type() != ControlMessages.WELCOME)
        {
            throw new AssertionError("daemon answered HELLO with message type " + answer.type() +
                (answer.type() == ControlMessages.ERROR ? ": " + answer.getString(ControlMessages.ERROR_MESSAGE) : ""));
        }
        slot = answer.getInt(ControlMessages.WELCOME_CLIENT_SLOT);
        maxBatchEntries = answer.getInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES);
        segmentHandle = answer.getLong(ControlMessages.WELCOME_SEGMENT_HANDLE);
    }

    /**
     * Send one request, written by {@code encoder} into a frame it begins itself (its length as the encoder left
     * it), and wait for the answer.
     *
     * @return the answer, valid until the next request.
     */
    ControlFrame request(final Consumer<ControlFrame> encoder, final Duration timeout)
    {
        return request(encoder, -1, timeout);
    }

    /**
     * Send a request without waiting for its answer (to hold several at once); read answers with {@link #answer}.
     */
    void send(final Consumer<ControlFrame> encoder, final Duration timeout)
    {
        final ControlFrame frame = new ControlFrame().wrap(frameBuffer, 0);
        encoder.accept(frame);
        final int length = frame.length();
        final long deadline = System.nanoTime() + timeout.toNanos();
        for (int sent = 0; sent < length; )
        {
            sent += Math.max(0, socket.send(frameMemory, sent, length - sent));
            checkDeadline(deadline, "sending a request");
        }
    }

    /**
     * Read the next answer (one frame).
     *
     * @return the answer, valid until the next call.
     */
    ControlFrame answer(final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        int received = 0;
        while (received < ControlFrame.HEADER_LENGTH || received < ControlFrame.frameLength(frameBuffer, 0))
        {
            checkDeadline(deadline, "waiting for an answer");
            awaitReadable(deadline);
            final int wanted = received < ControlFrame.HEADER_LENGTH ? ControlFrame.HEADER_LENGTH - received :
                ControlFrame.frameLength(frameBuffer, 0) - received;
            final int n = socket.receive(frameMemory, received, wanted);
            if (n == 0)
            {
                throw new AssertionError("daemon closed the connection instead of answering");
            }
            received += Math.max(0, n);
        }
        return new ControlFrame().wrap(frameBuffer, 0);
    }

    /**
     * As {@link #request(Consumer, Duration)}, passing {@code fd} (SCM_RIGHTS) with the frame when not negative.
     */
    ControlFrame request(final Consumer<ControlFrame> encoder, final int fd, final Duration timeout)
    {
        final ControlFrame frame = new ControlFrame().wrap(frameBuffer, 0);
        encoder.accept(frame);
        final int length = frame.length();
        final long deadline = System.nanoTime() + timeout.toNanos();
        int sent = 0;
        if (fd >= 0)
        {
            while (sent == 0)
            {
                sent = Math.max(0, socket.sendWithFd(frameMemory, 0, length, fd));
                checkDeadline(deadline, "sending a request with a descriptor");
            }
        }
        while (sent < length)
        {
            final int n = socket.send(frameMemory, sent, length - sent);
            sent += Math.max(0, n);
            checkDeadline(deadline, "sending a request");
        }
        int received = 0;
        while (received < ControlFrame.HEADER_LENGTH || received < ControlFrame.frameLength(frameBuffer, 0))
        {
            checkDeadline(deadline, "waiting for an answer");
            awaitReadable(deadline);
            final int n = socket.receive(frameMemory, received, ControlFrame.MAX_FRAME_LENGTH - received);
            if (n == 0)
            {
                throw new AssertionError("daemon closed the connection instead of answering");
            }
            received += Math.max(0, n);
        }
        return new ControlFrame().wrap(frameBuffer, 0);
    }

    /**
     * Submit one request through this client's submit ring, as the client library would, and wait for its
     * completion.
     *
     * @return the completion's status.
     */
    int submitAndAwait(final int opcode, final long segment, final long localAddress, final long targetAddress,
        final long length, final Duration timeout)
    {
        final long requestId = System.nanoTime();
        final int index = submitRing.tryClaim(RecordTypes.SUBMIT, SubmitRequestFlyweight.recordLength(0));
        if (index <= 0)
        {
            throw new AssertionError("submit ring full");
        }
        new SubmitRequestFlyweight().wrap(submitRing.buffer(), index).clearReserved().opcode(opcode)
            .requestId(requestId).segmentHandle(segment).localAddress(localAddress)
            .targetAddress(targetAddress).length(length).traceId(0).submitNanos(System.nanoTime()).noNotify();
        submitRing.commit(index);
        ringDoorbell();
        return (int)awaitCompletion(requestId, timeout)[0];
    }

    /**
     * Ring this client's submit-ring doorbell after publishing a record, as the client library does: a daemon whose
     * intake marked the word asleep is woken now, not when its bounded sleep ends (a client that never rings waits
     * that out: ringbuffer/PROTOCOL.md 3.6).
     */
    void ringDoorbell()
    {
        new Doorbell(submitRingBuffer, RingsFileDescriptor.SUBMIT_DOORBELL_OFFSET).ring();
    }

    /**
     * @return whether the daemon's intake has marked this client's doorbell asleep (it may sleep on it).
     */
    boolean doorbellMarked()
    {
        return new Doorbell(submitRingBuffer, RingsFileDescriptor.SUBMIT_DOORBELL_OFFSET).isMarked();
    }

    /**
     * Every COMPLETION record that arrives until (and including) the one of {@code requestId}, in order.
     *
     * @return {request id, status, bytes} of each.
     */
    java.util.List<long[]> completionsUntil(final long requestId, final Duration timeout)
    {
        final ManyToOneRingBuffer completions = new ManyToOneRingBuffer(completionRingBuffer);
        final CompletionFlyweight completion = new CompletionFlyweight();
        final java.util.List<long[]> seen = new java.util.ArrayList<>();
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (seen.isEmpty() || seen.get(seen.size() - 1)[0] != requestId)
        {
            checkDeadline(deadline, "waiting for the completion of request " + requestId + " (seen " + seen.size() +
                " others)");
            completions.read((type, buffer, index, recordLength) ->
            {
                if (type == RecordTypes.COMPLETION && (seen.isEmpty() || seen.get(seen.size() - 1)[0] != requestId))
                {
                    completion.wrap(buffer, index);
                    seen.add(new long[]{completion.requestId(), completion.status(), completion.bytesTransferred()});
                }
            });
            Thread.onSpinWait();
        }
        return seen;
    }

    /**
     * Wait for the completion of {@code requestId}; other records are skipped.
     *
     * @return {status, bytes transferred}.
     */
    long[] awaitCompletion(final long requestId, final Duration timeout)
    {
        final ManyToOneRingBuffer completions = new ManyToOneRingBuffer(completionRingBuffer);
        final CompletionFlyweight completion = new CompletionFlyweight();
        final long[] result = {-1, 0};
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (result[0] < 0)
        {
            checkDeadline(deadline, "waiting for the completion of request " + requestId);
            completions.read((type, buffer, index, recordLength) ->
            {
                if (type == RecordTypes.COMPLETION && completion.wrap(buffer, index).requestId() == requestId)
                {
                    result[0] = completion.status();
                    result[1] = completion.bytesTransferred();
                }
            });
            Thread.onSpinWait();
        }
        return result;
    }

    private void awaitReadable(final long deadline)
    {
        poller.clear();
        poller.add(socket.fd());
        poller.poll((int)Math.max(1, Math.min(100, (deadline - System.nanoTime()) / 1_000_000L)));
    }

    private static void checkDeadline(final long deadline, final String what)
    {
        if (System.nanoTime() > deadline)
        {
            throw new AssertionError("timed out " + what);
        }
    }

    /**
     * @return true when the daemon closed this connection within the timeout (it only ever speaks when asked,
     * so end of stream is the only thing to read).
     */
    boolean awaitClosedByDaemon(final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline)
        {
            awaitReadable(deadline);
            if (socket.receive(frameMemory, 0, 1) == 0)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Send {@code length} bytes as they are: any framing, or none.
     *
     * @return false when the daemon had closed the connection already (EPIPE, ECONNRESET).
     */
    boolean sendRaw(final byte[] bytes, final int length, final Duration timeout)
    {
        MemorySegment.copy(bytes, 0, frameMemory, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, length);
        final long deadline = System.nanoTime() + timeout.toNanos();
        try
        {
            for (int sent = 0; sent < length; )
            {
                sent += Math.max(0, socket.send(frameMemory, sent, length - sent));
                checkDeadline(deadline, "sending raw bytes");
            }
            return true;
        }
        catch (final io.xferd.nativebindings.NativeException ex)
        {
            return false;
        }
    }

    /**
     * @return the type of the next frame from the daemon (read whole), or -1 when it closes the connection first.
     * @throws AssertionError when neither happens within the timeout.
     */
    int awaitAnswerOrClose(final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        int received = 0;
        try
        {
            while (received < ControlFrame.HEADER_LENGTH || received < ControlFrame.frameLength(frameBuffer, 0))
            {
                checkDeadline(deadline, "waiting for an answer or the end of the connection");
                awaitReadable(deadline);
                final int wanted = received < ControlFrame.HEADER_LENGTH ? ControlFrame.HEADER_LENGTH - received :
                    ControlFrame.frameLength(frameBuffer, 0) - received;
                final int n = socket.receive(frameMemory, received, wanted);
                if (n == 0)
                {
                    return -1;
                }
                received += Math.max(0, n);
            }
        }
        catch (final io.xferd.nativebindings.NativeException ex)
        {
            return -1; // reset by the daemon
        }
        return new ControlFrame().wrap(frameBuffer, 0).type();
    }

    /**
     * @return true while the daemon keeps this connection open (nothing to read, no end of stream).
     */
    boolean isOpenedByDaemon()
    {
        return socket.receive(frameMemory, 0, 1) < 0;
    }

    int slot()
    {
        return slot;
    }

    /**
     * @return this client's submit ring as raw memory (data area and trailer): the test may write anything into it.
     */
    UnsafeBuffer submitRingBuffer()
    {
        return submitRingBuffer;
    }

    /**
     * @return this client's submit ring as an honest producer writes it.
     */
    OneToOneRingBuffer submitRing()
    {
        return submitRing;
    }

    int maxBatchEntries()
    {
        return maxBatchEntries;
    }

    long segmentHandle()
    {
        return segmentHandle;
    }

    @Override
    public void close()
    {
        socket.close();
        if (rings != null)
        {
            MappedMemory.unmap(rings);
        }
        arena.close();
    }
}
