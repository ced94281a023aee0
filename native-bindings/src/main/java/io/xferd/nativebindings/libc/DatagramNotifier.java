package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * Sends one datagram to an AF_UNIX SOCK_DGRAM socket by path, as {@code sd_notify(3)} does with
 * {@code $NOTIFY_SOCKET} ("READY=1", "STATUS=...", "WATCHDOG=1"). A path starting with '@' names an abstract socket.
 * Control plane: a socket is opened and closed per call.
 */
public final class DatagramNotifier
{
    private DatagramNotifier()
    {
    }

    public static void send(final String socketPath, final String message)
    {
        final byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        final int fd = Sockets.socket(Sockets.SOCK_DGRAM);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment address = SocketAddressUnix.encode(arena, socketPath);
            final MemorySegment payload = arena.allocate(Math.max(1, bytes.length));
            MemorySegment.copy(bytes, 0, payload, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes.length);
            final MemorySegment capture = CallScratch.capture();
            final long sent = (long)Sockets.SENDTO.invokeExact(
                capture, fd, payload, (long)bytes.length, Sockets.MSG_NOSIGNAL, address, (int)address.byteSize());
            if (sent < 0)
            {
                throw new NativeException("sendto", CallScratch.errno(capture), "path=" + socketPath);
            }
        }
        catch (final Throwable t)
        {
            FileDescriptors.closeQuietly(fd);
            throw Libc.rethrow(t);
        }
        FileDescriptors.close(fd);
    }
}
