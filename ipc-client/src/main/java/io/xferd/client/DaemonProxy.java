package io.xferd.client;

import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.MalformedFrameException;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.Poller;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The client's end of the daemon's control socket: encodes requests, waits (bounded) for their answer, and
 * says whether the daemon is still there. Control plane only; callers hold the client's control lock.
 */
final class DaemonProxy implements AutoCloseable
{
    private final UnixSocket socket;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendSegment = arena.allocate(ControlFrame.MAX_FRAME_LENGTH, 8);
    private final MemorySegment receiveSegment = arena.allocate(ControlFrame.MAX_FRAME_LENGTH, 8);
    private final MemorySegment probeSegment = arena.allocate(8, 8);
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(sendSegment.address(), ControlFrame.MAX_FRAME_LENGTH);
    private final UnsafeBuffer receiveBuffer =
        new UnsafeBuffer(receiveSegment.address(), ControlFrame.MAX_FRAME_LENGTH);
    private final ControlFrame outbound = new ControlFrame();
    private final ControlFrame inbound = new ControlFrame();
    private final Poller poller = new Poller(1);
    private final int[] fdHolder = new int[1];
    private final long timeoutMs;
    private long nextCorrelationId = 1;
    private int receivedFd = -1;

    private DaemonProxy(final UnixSocket socket, final long timeoutMs)
    {
        this.socket = socket;
        this.timeoutMs = timeoutMs;
    }

    static DaemonProxy connect(final Path socketPath, final long timeoutMs)
    {
        try
        {
            final UnixSocket socket = UnixSocket.connect(socketPath);
            try
            {
                DaemonIdentity.verify(socketPath, socket.peerCredentials().uid());
            }
            catch (final RuntimeException ex)
            {
                socket.close();
                throw ex;
            }
            socket.configureBlocking(false);
            return new DaemonProxy(socket, timeoutMs);
        }
        catch (final NativeException ex)
        {
            if (ex.errno() == Errno.ENOENT || ex.errno() == Errno.ECONNREFUSED)
            {
                throw new DaemonGoneException("no xferd daemon listening on " + socketPath +
                    " (start one with `bin/xferd daemon`, or point the client at its --dir)", ex);
            }
            throw new XferException("cannot connect to " + socketPath + ": " + ex.getMessage(), ex);
        }
    }

    long nextCorrelationId()
    {
        return nextCorrelationId++;
    }

    ControlFrame begin(final int type)
    {
        return outbound.wrap(sendBuffer, 0).begin(type);
    }

    /**
     * Send the frame begun with {@link #begin}, with {@code fd} attached when {@code >= 0}.
     */
    void send(final int fd)
    {
        final int length = outbound.length();
        int sent = 0;
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        try
        {
            while (sent < length)
            {
                final int n = sent == 0 && fd >= 0 ?
                    socket.sendWithFd(sendSegment, 0, length, fd) : socket.send(sendSegment, sent, length - sent);
                if (n > 0)
                {
                    sent += n;
                }
                else if (System.nanoTime() > deadline)
                {
                    throw new DaemonGoneException("daemon did not take a control message within " + timeoutMs + " ms");
                }
                else
                {
                    Thread.onSpinWait();
                }
            }
        }
        catch (final NativeException ex)
        {
            throw new DaemonGoneException("daemon connection lost: " + ex.getMessage(), ex);
        }
    }

    /**
     * Wait for the answer frame; valid until the next call. A descriptor that came with it is kept for
     * {@link #takeFd()}.
     */
    ControlFrame awaitAnswer()
    {
        int received = 0;
        final long deadline = System.currentTimeMillis() + timeoutMs;
        while (true)
        {
            if (received >= ControlFrame.HEADER_LENGTH)
            {
                final int length;
                try
                {
                    length = ControlFrame.frameLength(receiveBuffer, 0);
                }
                catch (final MalformedFrameException ex)
                {
                    throw new XferException("daemon sent a malformed frame: " + ex.getMessage());
                }
                if (received >= length)
                {
                    if (received > length)
                    {
                        throw new XferException("daemon sent more than one answer");
                    }
                    return inbound.wrap(receiveBuffer, 0);
                }
            }
            final long waitMs = deadline - System.currentTimeMillis();
            if (waitMs <= 0)
            {
                throw new DaemonGoneException("no answer from the daemon within " + timeoutMs + " ms");
            }
            poller.clear();
            poller.add(socket.fd());
            poller.poll((int)Math.min(waitMs, 100));
            final int n;
            try
            {
                n = socket.receiveWithFd(receiveSegment, received, ControlFrame.MAX_FRAME_LENGTH - received, fdHolder);
            }
            catch (final NativeException ex)
            {
                throw new DaemonGoneException("daemon connection lost: " + ex.getMessage(), ex);
            }
            if (n == 0)
            {
                throw new DaemonGoneException("daemon closed the connection");
            }
            if (n > 0)
            {
                if (fdHolder[0] >= 0)
                {
                    if (receivedFd >= 0)
                    {
                        Memfd.close(receivedFd);
                    }
                    receivedFd = fdHolder[0];
                }
                received += n;
            }
        }
    }

    /**
     * Wait for the answer to request {@code correlationId}, sent with {@link #send}.
     *
     * @return OK's value: the segment handle for OPEN_SEGMENT, else 0.
     * @throws ControlException when the daemon refused the request.
     * @throws XferException    when the answer is to another request or neither OK nor ERROR.
     */
    long awaitOk(final long correlationId)
    {
        final ControlFrame answer = awaitAnswer();
        if (answer.getLong(ControlMessages.CORRELATION_ID) != correlationId)
        {
            throw new XferException("daemon answered another request (" +
                answer.getLong(ControlMessages.CORRELATION_ID) + " != " + correlationId + ")");
        }
        if (answer.type() == ControlMessages.ERROR)
        {
            throw new ControlException(answer.getInt(ControlMessages.ERROR_CODE),
                answer.getString(ControlMessages.ERROR_MESSAGE));
        }
        if (answer.type() != ControlMessages.OK)
        {
            throw new XferException("unexpected answer: " + describe(answer));
        }
        return answer.getLong(ControlMessages.OK_VALUE);
    }

    int takeFd()
    {
        final int fd = receivedFd;
        receivedFd = -1;
        return fd;
    }

    /**
     * Non-blocking look at the socket: the daemon never speaks unasked, so end-of-stream (or an error) means
     * it is gone.
     */
    boolean isDaemonConnected()
    {
        try
        {
            // peek, so a byte the daemon might send one day is not taken out of the control stream
            return !socket.isPeerClosed(probeSegment);
        }
        catch (final NativeException ex)
        {
            return false;
        }
    }

    @Override
    public void close()
    {
        socket.close();
        if (receivedFd >= 0)
        {
            Memfd.close(receivedFd);
            receivedFd = -1;
        }
        arena.close();
    }

    static String describe(final ControlFrame frame)
    {
        return frame.type() == ControlMessages.ERROR ? frame.getString(ControlMessages.ERROR_MESSAGE) :
            "message type " + frame.type();
    }
}
