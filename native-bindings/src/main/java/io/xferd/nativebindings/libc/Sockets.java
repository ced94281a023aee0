package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Socket system calls and constants (Linux x86_64) shared by {@link UnixSocket}, {@link UnixDatagramSocket},
 * {@link DatagramNotifier} and {@link TcpSockets}.
 */
final class Sockets
{
    static final int AF_UNIX = 1;
    static final int SOCK_STREAM = 1;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_NONBLOCK = 0x800;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int SOL_SOCKET = 1;
    static final int SO_PEERCRED = 17;
    static final int SCM_RIGHTS = 1;
    static final int MSG_CTRUNC = 0x8;
    static final int MSG_NOSIGNAL = 0x4000;
    static final int MSG_PEEK = 0x2;
    static final int MSG_DONTWAIT = 0x40;
    static final int MSG_CMSG_CLOEXEC = 0x40000000;

    static final MethodHandle SOCKET =
        Libc.downcallCapturingErrno("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    static final MethodHandle BIND =
        Libc.downcallCapturingErrno("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle LISTEN =
        Libc.downcallCapturingErrno("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    static final MethodHandle CONNECT =
        Libc.downcallCapturingErrno("connect", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle ACCEPT4 = Libc.downcallCapturingErrno(
        "accept4", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    static final MethodHandle SEND = Libc.downcallCapturingErrno(
        "send", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    static final MethodHandle RECV = Libc.downcallCapturingErrno(
        "recv", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    static final MethodHandle SENDTO = Libc.downcallCapturingErrno(
        "sendto", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle SENDMSG = Libc.downcallCapturingErrno(
        "sendmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle RECVMSG = Libc.downcallCapturingErrno(
        "recvmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    static final MethodHandle GETSOCKOPT = Libc.downcallCapturingErrno(
        "getsockopt", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    static final MethodHandle SETSOCKOPT = Libc.downcallCapturingErrno(
        "setsockopt", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));

    private Sockets()
    {
    }

    static int socket(final int type)
    {
        final MemorySegment capture = CallScratch.capture();
        final int fd;
        try
        {
            fd = (int)SOCKET.invokeExact(capture, AF_UNIX, type | SOCK_CLOEXEC, 0);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (fd < 0)
        {
            throw new NativeException("socket", CallScratch.errno(capture));
        }
        return fd;
    }

    /**
     * bind(2), or connect(2) with {@code connect}, to a sockaddr_un built by {@link SocketAddressUnix}.
     */
    static void bindOrConnect(final int fd, final MemorySegment address, final boolean connect, final String path)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = connect ?
                (int)CONNECT.invokeExact(capture, fd, address, (int)address.byteSize()) :
                (int)BIND.invokeExact(capture, fd, address, (int)address.byteSize());
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result != 0)
        {
            throw new NativeException(connect ? "connect" : "bind", CallScratch.errno(capture), "path=" + path);
        }
    }
}
