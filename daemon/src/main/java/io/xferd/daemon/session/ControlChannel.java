package io.xferd.daemon.session;

import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.MalformedFrameException;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The daemon's end of one client's control socket: reassembles frames from the byte stream (a frame may
 * arrive in pieces), keeps the descriptor that came with a frame, and sends answers. Conductor thread only.
 */
public final class ControlChannel implements AutoCloseable
{
    private static final int BUFFER_LENGTH = 2 * ControlFrame.MAX_FRAME_LENGTH;

    private final UnixSocket socket;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment receiveSegment = arena.allocate(BUFFER_LENGTH, 8);
    private final MemorySegment sendSegment = arena.allocate(ControlFrame.MAX_FRAME_LENGTH, 8);
    private final UnsafeBuffer receiveBuffer = new UnsafeBuffer(receiveSegment.address(), BUFFER_LENGTH);
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(sendSegment.address(), ControlFrame.MAX_FRAME_LENGTH);
    private final ControlFrame inbound = new ControlFrame();
    private final ControlFrame outbound = new ControlFrame();
    private final int[] receivedFd = new int[1];
    private int received;
    private int pendingFd = -1;
    private boolean closeRequested;
    private boolean closed;

    /**
     * Handles one complete frame; the frame is valid only during the call.
     */
    @FunctionalInterface
    public interface FrameHandler
    {
        void onFrame(ControlChannel channel, ControlFrame frame);
    }

    private long openedAtMs;

    public ControlChannel(final UnixSocket socket)
    {
        this.socket = socket;
    }

    public ControlChannel(final UnixSocket socket, final long openedAtMs)
    {
        this.socket = socket;
        this.openedAtMs = openedAtMs;
    }

    /**
     * @return when the connection was accepted (epoch ms), for the HELLO deadline.
     */
    public long openedAtMs()
    {
        return openedAtMs;
    }

    public UnixSocket socket()
    {
        return socket;
    }

    /**
     * Read what the socket has and hand over each complete frame.
     *
     * @return false at end of stream (the client closed or died).
     * @throws MalformedFrameException when the stream breaks the framing.
     */
    public boolean poll(final FrameHandler handler)
    {
        while (!closeRequested)
        {
            final int n = socket.receiveWithFd(receiveSegment, received, BUFFER_LENGTH - received, receivedFd);
            if (n == 0)
            {
                return false;
            }
            if (n < 0)
            {
                return true;
            }
            if (receivedFd[0] >= 0)
            {
                if (pendingFd >= 0)
                {
                    Memfd.close(receivedFd[0]);
                    throw new MalformedFrameException("a second descriptor arrived before the first was used");
                }
                pendingFd = receivedFd[0];
            }
            received += n;
            int offset = 0;
            while (received - offset >= ControlFrame.HEADER_LENGTH)
            {
                final int length = ControlFrame.frameLength(receiveBuffer, offset);
                if (received - offset < length)
                {
                    break;
                }
                handler.onFrame(this, inbound.wrap(receiveBuffer, offset));
                offset += length;
            }
            if (offset > 0)
            {
                receiveBuffer.putBytes(0, receiveBuffer, offset, received - offset);
                received -= offset;
            }
        }
        return false;
    }

    /**
     * Ask {@link #poll} to stop and report the channel closed, e.g. after refusing the client; safe to call
     * from inside a frame handler.
     */
    public void requestClose()
    {
        closeRequested = true;
    }

    /**
     * @return the descriptor that arrived with the current frame, now owned by the caller, or -1.
     */
    public int takeFd()
    {
        final int fd = pendingFd;
        pendingFd = -1;
        return fd;
    }

    public ControlFrame beginAnswer(final int type)
    {
        return outbound.wrap(sendBuffer, 0).begin(type);
    }

    /**
     * Send the frame begun with {@link #beginAnswer}, with a descriptor when {@code fd >= 0}.
     *
     * @return false when the client could not take it (its socket is full or gone).
     */
    public boolean send(final int fd)
    {
        final int length = outbound.length();
        try
        {
            final int sent = fd >= 0 ?
                socket.sendWithFd(sendSegment, 0, length, fd) : socket.send(sendSegment, 0, length);
            return sent == length;
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (pendingFd >= 0)
        {
            Memfd.close(pendingFd);
            pendingFd = -1;
        }
        socket.close();
        arena.close();
    }
}
