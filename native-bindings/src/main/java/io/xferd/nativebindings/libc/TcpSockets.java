package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * TCP socket options the JDK does not expose, set on the file descriptor of a socket the JVM opened.
 * <p>
 * {@code TCP_CONGESTION} picks the congestion control algorithm of one connection, overriding the host's
 * {@code net.ipv4.tcp_congestion_control}. Called once per connection at setup, never on the data path.
 */
public final class TcpSockets
{
    static final int IPPROTO_TCP = 6;
    static final int TCP_CONGESTION = 13;
    /**
     * {@code TCP_CA_NAME_MAX}: an algorithm's name and its terminating NUL fit in 16 bytes.
     */
    public static final int CONGESTION_NAME_MAX = 16;

    private TcpSockets()
    {
    }

    /**
     * setsockopt(IPPROTO_TCP, TCP_CONGESTION).
     *
     * @param fd   a TCP socket.
     * @param name the algorithm, e.g. {@code "cubic"}: at most 15 bytes.
     * @throws NativeException with {@code ENOENT} when the algorithm is neither built in nor loaded, {@code EPERM}
     *                         when an unprivileged process asks for one outside
     *                         {@code net.ipv4.tcp_allowed_congestion_control}.
     */
    public static void setCongestionControl(final int fd, final String name)
    {
        final byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        if (bytes.length == 0 || bytes.length >= CONGESTION_NAME_MAX)
        {
            throw new IllegalArgumentException(
                "congestion control name must be 1-" + (CONGESTION_NAME_MAX - 1) + " bytes: " + name);
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment value = arena.allocate(CONGESTION_NAME_MAX);
            MemorySegment.copy(bytes, 0, value, JAVA_BYTE, 0, bytes.length);
            final MemorySegment capture = CallScratch.capture();
            final int result = (int)Sockets.SETSOCKOPT.invokeExact(
                capture, fd, IPPROTO_TCP, TCP_CONGESTION, value, bytes.length + 1);
            if (result != 0)
            {
                throw new NativeException(
                    "setsockopt", CallScratch.errno(capture), "TCP_CONGESTION " + name + " fd=" + fd);
            }
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * getsockopt(IPPROTO_TCP, TCP_CONGESTION).
     *
     * @param fd a TCP socket.
     * @return the algorithm the connection uses, e.g. {@code "bbr"}.
     */
    public static String congestionControl(final int fd)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment value = arena.allocate(CONGESTION_NAME_MAX);
            final MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, CONGESTION_NAME_MAX);
            final MemorySegment capture = CallScratch.capture();
            final int result = (int)Sockets.GETSOCKOPT.invokeExact(
                capture, fd, IPPROTO_TCP, TCP_CONGESTION, value, length);
            if (result != 0)
            {
                throw new NativeException("getsockopt", CallScratch.errno(capture), "TCP_CONGESTION fd=" + fd);
            }
            final int returned = Math.min(length.get(JAVA_INT, 0), CONGESTION_NAME_MAX);
            int end = 0;
            while (end < returned && value.get(JAVA_BYTE, end) != 0)
            {
                end++;
            }
            final byte[] bytes = new byte[end];
            MemorySegment.copy(value, JAVA_BYTE, 0, bytes, 0, end);
            return new String(bytes, StandardCharsets.US_ASCII);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }
}
