package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An AF_UNIX SOCK_STREAM socket (close-on-exec): the daemon's control socket and the client's connection to it.
 * Supports passing one file descriptor per message (SCM_RIGHTS) and reading the peer's credentials (SO_PEERCRED).
 * <p>
 * Not thread-safe as a whole, but one thread may send while another receives. Buffers passed to the send and receive
 * methods must be native segments; EINTR is retried; EAGAIN on a non-blocking socket is reported as {@code -1}.
 */
public final class UnixSocket implements AutoCloseable
{
    // struct msghdr (x86_64)
    private static final long MSG_NAME = 0;
    private static final long MSG_NAMELEN = 8;
    private static final long MSG_IOV = 16;
    private static final long MSG_IOVLEN = 24;
    private static final long MSG_CONTROL = 32;
    private static final long MSG_CONTROLLEN = 40;
    private static final long MSG_FLAGS = 48;
    private static final long MSGHDR_SIZE = 56;
    // struct cmsghdr (x86_64): size_t cmsg_len; int cmsg_level; int cmsg_type; then data aligned to 8.
    private static final long CMSG_LEN_OFFSET = 0;
    private static final long CMSG_LEVEL_OFFSET = 8;
    private static final long CMSG_TYPE_OFFSET = 12;
    private static final long CMSG_DATA_OFFSET = 16;
    private static final long CMSG_LEN_ONE_FD = CMSG_DATA_OFFSET + Integer.BYTES;          // CMSG_LEN(4) = 20
    private static final long CMSG_SPACE_ONE_FD = CMSG_DATA_OFFSET + align8(Integer.BYTES); // CMSG_SPACE(4) = 24
    // struct ucred
    private static final long UCRED_SIZE = 12;

    private final String path;
    private int fd;
    private boolean blocking = true;

    private UnixSocket(final int fd, final String path)
    {
        this.fd = fd;
        this.path = path;
    }

    /**
     * Binds a new socket to {@code path} and listens. An existing file at the path makes this fail with EADDRINUSE:
     * removing a stale socket file is the caller's decision.
     */
    public static UnixSocket listen(final Path path, final int backlog)
    {
        final String name = path.toString();
        final int fd = Sockets.socket(Sockets.SOCK_STREAM);
        try (Arena arena = Arena.ofConfined())
        {
            Sockets.bindOrConnect(fd, SocketAddressUnix.encode(arena, name), false, name);
            final MemorySegment capture = CallScratch.capture();
            final int result = (int)Sockets.LISTEN.invokeExact(capture, fd, backlog);
            if (result != 0)
            {
                throw new NativeException("listen", CallScratch.errno(capture), "path=" + name);
            }
        }
        catch (final Throwable t)
        {
            FileDescriptors.closeQuietly(fd);
            throw Libc.rethrow(t);
        }
        return new UnixSocket(fd, name);
    }

    /**
     * Connects, blocking, to a listening socket; ENOENT when there is no socket file, ECONNREFUSED when nobody
     * listens on it any more.
     */
    public static UnixSocket connect(final Path path)
    {
        final String name = path.toString();
        final int fd = Sockets.socket(Sockets.SOCK_STREAM);
        try (Arena arena = Arena.ofConfined())
        {
            Sockets.bindOrConnect(fd, SocketAddressUnix.encode(arena, name), true, name);
        }
        catch (final RuntimeException e)
        {
            FileDescriptors.closeQuietly(fd);
            throw e;
        }
        return new UnixSocket(fd, name);
    }

    /**
     * @return the accepted connection (blocking, close-on-exec), or {@code null} when this socket is non-blocking
     * and no connection is pending.
     */
    public UnixSocket accept()
    {
        final MemorySegment capture = CallScratch.capture();
        while (true)
        {
            final int accepted;
            try
            {
                accepted = (int)Sockets.ACCEPT4.invokeExact(
                    capture, fd, MemorySegment.NULL, MemorySegment.NULL, Sockets.SOCK_CLOEXEC);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (accepted >= 0)
            {
                return new UnixSocket(accepted, path);
            }
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EAGAIN)
            {
                return null;
            }
            if (errno != Errno.EINTR && errno != Errno.ECONNABORTED)
            {
                throw new NativeException("accept4", errno, "path=" + path);
            }
        }
    }

    public void configureBlocking(final boolean blocking)
    {
        FileDescriptors.setBlocking(fd, blocking);
        this.blocking = blocking;
    }

    public boolean isBlocking()
    {
        return blocking;
    }

    public int fd()
    {
        return fd;
    }

    /**
     * send(2) with MSG_NOSIGNAL.
     *
     * @return bytes sent, or -1 when non-blocking and the socket buffer is full.
     * @throws NativeException EPIPE or ECONNRESET when the peer has gone.
     */
    public int send(final MemorySegment buffer, final long offset, final int length)
    {
        final MemorySegment slice = buffer.asSlice(offset, length);
        final MemorySegment capture = CallScratch.capture();
        while (true)
        {
            final long sent;
            try
            {
                sent = (long)Sockets.SEND.invokeExact(capture, fd, slice, (long)length, Sockets.MSG_NOSIGNAL);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (sent >= 0)
            {
                return (int)sent;
            }
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EAGAIN)
            {
                return -1;
            }
            if (errno != Errno.EINTR)
            {
                throw new NativeException("send", errno, "fd=" + fd);
            }
        }
    }

    /**
     * Look, without taking anything and without blocking, whether the peer has closed its end: recv(2) with
     * MSG_PEEK | MSG_DONTWAIT of one byte into {@code scratch} (a native segment of at least one byte, reused by
     * the caller so the check allocates nothing). Bytes waiting stay in the stream.
     *
     * @return true at end of stream or on a connection error; false while the connection is open.
     */
    public boolean isPeerClosed(final MemorySegment scratch)
    {
        try
        {
            return recv(scratch, 1, Sockets.MSG_PEEK | Sockets.MSG_DONTWAIT) == 0;
        }
        catch (final NativeException ex)
        {
            return true;
        }
    }

    /**
     * recv(2).
     *
     * @return bytes received, 0 at end of stream, or -1 when non-blocking and nothing is there.
     */
    public int receive(final MemorySegment buffer, final long offset, final int length)
    {
        return recv(buffer.asSlice(offset, length), length, 0);
    }

    /**
     * recv(2) with flags, EINTR retried.
     *
     * @return bytes received, 0 at end of stream, or -1 on EAGAIN.
     */
    private int recv(final MemorySegment target, final int length, final int flags)
    {
        final MemorySegment capture = CallScratch.capture();
        while (true)
        {
            final long received;
            try
            {
                received = (long)Sockets.RECV.invokeExact(capture, fd, target, (long)length, flags);
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
                throw new NativeException("recv", errno, "fd=" + fd);
            }
        }
    }

    /**
     * sendmsg(2) of {@code length} bytes with one descriptor attached (SCM_RIGHTS), MSG_NOSIGNAL. The receiver gets
     * a new descriptor for the same open file; this side keeps its own and still has to close it.
     *
     * @return bytes sent (the descriptor travels with the first byte), or -1 when non-blocking and full.
     */
    public int sendWithFd(final MemorySegment buffer, final long offset, final int length, final int fdToPass)
    {
        final long base = nativeAddress(buffer, offset, length);
        final CallScratch scratch = CallScratch.get();
        final MemorySegment capture = scratch.captureSegment();
        final MemorySegment message = scratch.message();
        final long msg = CallScratch.MSGHDR_OFFSET;
        final long iov = CallScratch.IOV_OFFSET;
        final long cmsg = CallScratch.CMSG_OFFSET;
        message.fill((byte)0);
        message.set(JAVA_LONG, iov, base);
        message.set(JAVA_LONG, iov + 8, length);
        message.set(JAVA_LONG, cmsg + CMSG_LEN_OFFSET, CMSG_LEN_ONE_FD);
        message.set(JAVA_INT, cmsg + CMSG_LEVEL_OFFSET, Sockets.SOL_SOCKET);
        message.set(JAVA_INT, cmsg + CMSG_TYPE_OFFSET, Sockets.SCM_RIGHTS);
        message.set(JAVA_INT, cmsg + CMSG_DATA_OFFSET, fdToPass);
        message.set(JAVA_LONG, msg + MSG_IOV, message.address() + iov);
        message.set(JAVA_LONG, msg + MSG_IOVLEN, 1L);
        message.set(JAVA_LONG, msg + MSG_CONTROL, message.address() + cmsg);
        message.set(JAVA_LONG, msg + MSG_CONTROLLEN, CMSG_SPACE_ONE_FD);
        final MemorySegment header = message.asSlice(msg, MSGHDR_SIZE);
        while (true)
        {
            final long sent;
            try
            {
                sent = (long)Sockets.SENDMSG.invokeExact(capture, fd, header, Sockets.MSG_NOSIGNAL);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (sent >= 0)
            {
                return (int)sent;
            }
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EAGAIN)
            {
                return -1;
            }
            if (errno != Errno.EINTR)
            {
                throw new NativeException("sendmsg", errno, "fd=" + fd + " passing fd=" + fdToPass);
            }
        }
    }

    /**
     * recvmsg(2) with room for one SCM_RIGHTS descriptor, received close-on-exec.
     *
     * @param receivedFd its element 0 is set to the received descriptor, which the caller now owns, or -1 when
     *                   the message carried none.
     * @return bytes received, 0 at end of stream, or -1 when non-blocking and nothing is there.
     */
    public int receiveWithFd(final MemorySegment buffer, final long offset, final int length, final int[] receivedFd)
    {
        final long base = nativeAddress(buffer, offset, length);
        final CallScratch scratch = CallScratch.get();
        final MemorySegment capture = scratch.captureSegment();
        final MemorySegment message = scratch.message();
        final long msg = CallScratch.MSGHDR_OFFSET;
        final long iov = CallScratch.IOV_OFFSET;
        final long cmsg = CallScratch.CMSG_OFFSET;
        receivedFd[0] = -1;
        final MemorySegment header = message.asSlice(msg, MSGHDR_SIZE);
        while (true)
        {
            message.fill((byte)0);
            message.set(JAVA_LONG, iov, base);
            message.set(JAVA_LONG, iov + 8, length);
            message.set(JAVA_LONG, msg + MSG_IOV, message.address() + iov);
            message.set(JAVA_LONG, msg + MSG_IOVLEN, 1L);
            message.set(JAVA_LONG, msg + MSG_CONTROL, message.address() + cmsg);
            message.set(JAVA_LONG, msg + MSG_CONTROLLEN, CMSG_SPACE_ONE_FD);
            final long received;
            try
            {
                received = (long)Sockets.RECVMSG.invokeExact(capture, fd, header, Sockets.MSG_CMSG_CLOEXEC);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (received >= 0)
            {
                final long controlLength = message.get(JAVA_LONG, msg + MSG_CONTROLLEN);
                if (controlLength >= CMSG_LEN_ONE_FD &&
                    message.get(JAVA_LONG, cmsg + CMSG_LEN_OFFSET) >= CMSG_LEN_ONE_FD &&
                    message.get(JAVA_INT, cmsg + CMSG_LEVEL_OFFSET) == Sockets.SOL_SOCKET &&
                    message.get(JAVA_INT, cmsg + CMSG_TYPE_OFFSET) == Sockets.SCM_RIGHTS)
                {
                    // With more fds than room the kernel sets MSG_CTRUNC and closes the extra ones; we keep the first.
                    receivedFd[0] = message.get(JAVA_INT, cmsg + CMSG_DATA_OFFSET);
                }
                return (int)received;
            }
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EAGAIN)
            {
                return -1;
            }
            if (errno != Errno.EINTR)
            {
                throw new NativeException("recvmsg", errno, "fd=" + fd);
            }
        }
    }

    /**
     * getsockopt(SO_PEERCRED): who connected (or, on the client side, who is listening).
     */
    public PeerCredentials peerCredentials()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment ucred = arena.allocate(UCRED_SIZE, 4);
            final MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, (int)UCRED_SIZE);
            final MemorySegment capture = CallScratch.capture();
            final int result = (int)Sockets.GETSOCKOPT.invokeExact(
                capture, fd, Sockets.SOL_SOCKET, Sockets.SO_PEERCRED, ucred, length);
            if (result != 0)
            {
                throw new NativeException("getsockopt", CallScratch.errno(capture), "SO_PEERCRED fd=" + fd);
            }
            return new PeerCredentials(ucred.get(JAVA_INT, 0), ucred.get(JAVA_INT, 4), ucred.get(JAVA_INT, 8));
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * @return the path given to {@link #listen} or {@link #connect} (accepted sockets report the listener's).
     */
    public String path()
    {
        return path;
    }

    public boolean isClosed()
    {
        return fd < 0;
    }

    /**
     * Closes the descriptor; a second call does nothing. Does not remove the socket file.
     */
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
        return "UnixSocket{fd=" + fd + ", path=" + path + ", blocking=" + blocking + '}';
    }

    private static long nativeAddress(final MemorySegment buffer, final long offset, final int length)
    {
        if (!buffer.isNative())
        {
            throw new IllegalArgumentException("buffer must be a native segment");
        }
        Objects.checkFromIndexSize(offset, length, buffer.byteSize());
        return buffer.address() + offset;
    }

    private static long align8(final long value)
    {
        return (value + 7) & ~7L;
    }
}
