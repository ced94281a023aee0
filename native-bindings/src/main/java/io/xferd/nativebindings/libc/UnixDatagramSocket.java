package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * A bound AF_UNIX SOCK_DGRAM socket (close-on-exec) that receives datagrams: the listening side of
 * {@link DatagramNotifier}, e.g. a test standing in for systemd's notify socket. A path starting with '@' binds an
 * abstract socket (nothing in the filesystem).
 */
public final class UnixDatagramSocket implements AutoCloseable
{
    private final String path;
    private int fd;

    private UnixDatagramSocket(final int fd, final String path)
    {
        this.fd = fd;
        this.path = path;
    }

    /**
     * Binds to {@code path}; a filesystem socket file is created and left for the caller to remove.
     */
    public static UnixDatagramSocket bind(final String path)
    {
        final int fd = Sockets.socket(Sockets.SOCK_DGRAM);
        try (Arena arena = Arena.ofConfined())
        {
            Sockets.bindOrConnect(fd, SocketAddressUnix.encode(arena, path), false, path);
        }
        catch (final RuntimeException e)
        {
            FileDescriptors.closeQuietly(fd);
            throw e;
        }
        return new UnixDatagramSocket(fd, path);
    }

    public void configureBlocking(final boolean blocking)
    {
        FileDescriptors.setBlocking(fd, blocking);
    }

    /**
     * Receives one datagram; a datagram longer than {@code length} is truncated.
     *
     * @return bytes received, or -1 when non-blocking and none is queued.
     */
    public int receive(final MemorySegment buffer, final long offset, final int length)
    {
        final MemorySegment slice = buffer.asSlice(offset, length);
        final MemorySegment capture = CallScratch.capture();
        while (true)
        {
            final long received;
            try
            {
                received = (long)Sockets.RECV.invokeExact(capture, fd, slice, (long)length, 0);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (received >= 0)
            {
                return (int)received;
            }
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EAGAIN)
            {
                return -1;
            }
            if (errno != Errno.EINTR)
            {
                throw new NativeException("recv", errno, "path=" + path);
            }
        }
    }

    /**
     * Receives one datagram of at most {@code maxBytes} as UTF-8 text; control plane, allocates.
     *
     * @return the text, or null when non-blocking and none is queued.
     */
    public String receiveText(final int maxBytes)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(maxBytes);
            final int received = receive(buffer, 0, maxBytes);
            if (received < 0)
            {
                return null;
            }
            return new String(buffer.asSlice(0, received).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                StandardCharsets.UTF_8);
        }
    }

    public int fd()
    {
        return fd;
    }

    public String path()
    {
        return path;
    }

    @Override
    public void close()
    {
        final int toClose = fd;
        if (toClose >= 0)
        {
            fd = -1;
            FileDescriptors.close(toClose);
        }
    }

    @Override
    public String toString()
    {
        return "UnixDatagramSocket{fd=" + fd + ", path=" + path + '}';
    }
}
