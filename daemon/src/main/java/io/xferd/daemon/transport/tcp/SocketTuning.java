package io.xferd.daemon.transport.tcp;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.TcpSockets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.channels.NetworkChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Socket options of the peer data connections that the JDK does not offer, set once per connection before its
 * handshake: the TCP congestion control algorithm ({@code --tcp-congestion}).
 * <p>
 * Why: with the host's BBR, a connection that is never idle never sees its minimum RTT again, so every ~10 s BBR's
 * PROBE_RTT holds it to 4 packets for ~200 ms, a stall a lone latency-bound request waits out (docs/performance.md,
 * round eight). Failing to set it never stops a transfer: the connection keeps the host's algorithm, with one WARN
 * per peer and reason.
 */
final class SocketTuning
{
    private static final Logger LOG = LoggerFactory.getLogger(SocketTuning.class);
    private static final Path HOST_CONGESTION = Path.of("/proc/sys/net/ipv4/tcp_congestion_control");
    /** {@code sun.nio.ch.SelChImpl#getFDVal}, reachable because jvm.flags open java.base/sun.nio.ch; null if not. */
    private static final MethodHandle GET_FD_VAL = fdAccessor();

    private final String congestion;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /**
     * @param congestion the algorithm, e.g. "cubic", or null to leave the host's.
     */
    SocketTuning(final String congestion)
    {
        this.congestion = congestion;
    }

    /**
     * Set the configured algorithm on {@code channel}, a TCP socket to or from {@code peer}.
     *
     * @return true when set (or nothing is configured); false when the connection keeps the host's algorithm.
     */
    boolean apply(final SocketChannel channel, final String peer)
    {
        return set(channel, "connections with " + peer);
    }

    /**
     * Set the configured algorithm on a listening socket: the connections it accepts start on it, their handshake
     * included (Linux copies a listener's algorithm set by setsockopt to its children).
     *
     * @return true when set (or nothing is configured).
     */
    boolean applyToListener(final ServerSocketChannel listener)
    {
        return set(listener, "a peer listener");
    }

    private boolean set(final NetworkChannel channel, final String whom)
    {
        if (congestion == null)
        {
            return true;
        }
        try
        {
            TcpSockets.setCongestionControl(fd(channel), congestion);
            return true;
        }
        catch (final NativeException ex)
        {
            warnOnce(whom, Errno.name(ex.errno()), ex.errno() == Errno.ENOENT ?
                "not built into or loaded by this kernel (modprobe tcp_" + congestion + ")" :
                ex.errno() == Errno.EPERM ? "not in net.ipv4.tcp_allowed_congestion_control" : ex.getMessage());
            return false;
        }
        catch (final IllegalStateException | IllegalArgumentException ex)
        {
            warnOnce(whom, ex.getClass().getSimpleName(), ex.getMessage());
            return false;
        }
    }

    /**
     * @return the algorithm {@code channel} uses now, e.g. "bbr".
     */
    static String congestionControl(final NetworkChannel channel)
    {
        return TcpSockets.congestionControl(fd(channel));
    }

    /**
     * @return the host's default for new TCP connections ({@code net.ipv4.tcp_congestion_control}), or null where
     * it cannot be read.
     */
    static String hostCongestion()
    {
        try
        {
            return Files.readString(HOST_CONGESTION).strip();
        }
        catch (final IOException | SecurityException ex)
        {
            return null;
        }
    }

    /**
     * At start: which algorithm peer connections use, and why BBR's is worth knowing about.
     */
    static void logInForce(final String configured)
    {
        final String host = hostCongestion();
        if (configured != null)
        {
            LOG.info("peer TCP connections use congestion control {} (--tcp-congestion; the host's default is {})",
                configured, host == null ? "unknown" : host);
            return;
        }
        LOG.info("peer TCP connections use the host's congestion control {} (net.ipv4.tcp_congestion_control)",
            host == null ? "(unknown)" : host);
        if ("bbr".equals(host))
        {
            LOG.info("with bbr, PROBE_RTT holds a loaded connection to 4 packets for ~200 ms about every 10 s, a " +
                "stall that latency-bound requests wait out; --tcp-congestion cubic avoids it");
        }
    }

    static String peerOf(final SocketChannel channel)
    {
        try
        {
            final SocketAddress remote = channel.getRemoteAddress();
            return remote instanceof InetSocketAddress inet ? inet.getHostString() : String.valueOf(remote);
        }
        catch (final IOException ex)
        {
            return "(unknown peer)";
        }
    }

    private void warnOnce(final String whom, final String reason, final String detail)
    {
        // keyed by the reason alone: addresses (a listener per segment port, a peer's source address before its
        // proof) would let the set and the log grow with what others choose
        if (warned.add(reason))
        {
            LOG.warn("cannot set TCP congestion control {} on {} (said once per reason): {}; they use the host's {}",
                congestion, whom, detail, hostCongestion());
        }
    }

    private static int fd(final NetworkChannel channel)
    {
        if (GET_FD_VAL == null)
        {
            throw new IllegalStateException("no access to a socket's file descriptor (jvm.flags open " +
                "java.base/sun.nio.ch)");
        }
        try
        {
            return (int)GET_FD_VAL.invoke(channel);
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException("cannot read the file descriptor of " + channel + ": " + t, t);
        }
    }

    private static MethodHandle fdAccessor()
    {
        try
        {
            final Class<?> selChImpl = Class.forName("sun.nio.ch.SelChImpl");
            return MethodHandles.lookup().findVirtual(selChImpl, "getFDVal", MethodType.methodType(int.class));
        }
        catch (final ReflectiveOperationException | RuntimeException ex)
        {
            return null;
        }
    }
}
