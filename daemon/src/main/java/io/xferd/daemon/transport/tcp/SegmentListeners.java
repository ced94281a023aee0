package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.daemon.session.SessionAddress;
import io.xferd.ipc.ControlError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Per-segment RPC ports, for Mooncake's session semantics: a client may ask for a TCP port of its own segment on the
 * daemon's RPC host, so that {@code host:port} alone names that segment (what Mooncake's {@code get_rpc_port()}
 * returns: unique per engine on its host, listening for the engine's whole life). A port speaks the ordinary peer
 * protocol (the same handshake and cluster token as the RPC port); a descriptor fetch on it returns its segment's
 * descriptor whatever name is asked, and the descriptor names the daemon's RPC port, where data connections go.
 * <p>
 * One acceptor thread serves every port through a selector (no thread per port); each accepted connection is
 * served like one on the RPC port. A port lives until {@link #close(ClientSession)} (its client disconnected), which
 * also ends the connections it accepted. At most {@code capacity} ports at once. {@link #open} and {@link #close} are
 * called by the conductor's thread; lookups from any thread.
 */
public final class SegmentListeners implements io.xferd.daemon.session.SegmentPorts, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(SegmentListeners.class);
    private static final int BACKLOG = 64;
    private static final long CLOSE_WAIT_MS = 1000;

    private final PeerServer server;
    private final String host;
    private final int capacity;
    private final Map<ClientSession, Port> bySession = new ConcurrentHashMap<>();
    private final Map<Integer, Port> byPort = new ConcurrentHashMap<>();
    private Selector selector;
    private Thread acceptor;
    private volatile boolean running = true;

    private final ConcurrentLinkedQueue<Port> closing = new ConcurrentLinkedQueue<>();

    private record Port(ClientSession session, ServerSocketChannel channel, int number, CountDownLatch closed)
    {
    }

    /**
     * @param host     the daemon's RPC host, where every port is bound.
     * @param capacity the most ports open at once.
     */
    SegmentListeners(final PeerServer server, final String host, final int capacity)
    {
        this.server = server;
        this.host = host;
        this.capacity = capacity;
    }

    /**
     * Bind a port (0: the kernel picks a free one) for {@code session}'s segment and start accepting on it; the
     * session's existing port when it has one.
     *
     * @return the port number.
     * @throws RegistrationRefusedException with TOO_MANY_CLIENTS when {@code capacity} ports are open or the daemon is
     *                                      closing, MAP_FAILED when no port can be bound.
     */
    @Override
    public synchronized int open(final ClientSession session)
    {
        final Port existing = bySession.get(session);
        if (existing != null)
        {
            return existing.number();
        }
        if (!running)
        {
            throw new RegistrationRefusedException(ControlError.TOO_MANY_CLIENTS, "the daemon is closing");
        }
        if (bySession.size() >= capacity)
        {
            throw new RegistrationRefusedException(ControlError.TOO_MANY_CLIENTS,
                "all " + capacity + " segment ports are in use");
        }
        ServerSocketChannel channel = null;
        try
        {
            startAcceptor();
            channel = ServerSocketChannel.open();
            server.socketTuning().applyToListener(channel); // before listen, as PeerServer's
            channel.bind(new InetSocketAddress(host, 0), BACKLOG);
            channel.configureBlocking(false);
            final int number = ((InetSocketAddress)channel.getLocalAddress()).getPort();
            final Port port = new Port(session, channel, number, new CountDownLatch(1));
            bySession.put(session, port);
            byPort.put(number, port);
            channel.register(selector, SelectionKey.OP_ACCEPT, port);
            selector.wakeup();
            LOG.info("segment {} has its own RPC port {}:{}", session.segmentName(), host, number);
            return number;
        }
        catch (final IOException ex)
        {
            if (channel != null)
            {
                final Port port = bySession.remove(session);
                if (port != null)
                {
                    byPort.remove(port.number(), port);
                }
                closeQuietly(channel);
            }
            throw new RegistrationRefusedException(ControlError.MAP_FAILED,
                "cannot bind a segment port on " + host + ": " + ex.getMessage());
        }
    }

    /**
     * Stop listening on {@code session}'s port, if it has one, and end the connections accepted on it. Returns once
     * the port refuses connections: a channel registered with a selector is only really closed by the selector's
     * thread, so that thread closes it and this waits for it (microseconds; bounded).
     */
    @Override
    public synchronized void close(final ClientSession session)
    {
        final Port port = bySession.remove(session);
        if (port == null)
        {
            return;
        }
        byPort.remove(port.number(), port);
        closing.add(port);
        selector.wakeup();
        try
        {
            if (!port.closed().await(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS))
            {
                LOG.warn("segment port {} not closed by its acceptor within {} ms; closing it here", port.number(),
                    CLOSE_WAIT_MS);
                closeQuietly(port.channel());
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            closeQuietly(port.channel());
        }
        server.closeConnectionsOf(session);
        LOG.info("segment port {}:{} of {} closed", host, port.number(), session.segmentName());
    }

    /**
     * On the acceptor thread: deregister the port's channel first, so that closing it closes the socket now.
     */
    private void closePending() throws IOException
    {
        Port port;
        while ((port = closing.poll()) != null)
        {
            final SelectionKey key = port.channel().keyFor(selector);
            if (key != null)
            {
                key.cancel();
                selector.selectNow();
            }
            closeQuietly(port.channel());
            port.closed().countDown();
        }
    }

    /**
     * @return the port of {@code session}'s segment, or 0 when it has none.
     */
    public int portOf(final ClientSession session)
    {
        final Port port = bySession.get(session);
        return port == null ? 0 : port.number();
    }

    /**
     * @return the segment served at {@code host:port} when that is one of this daemon's segment ports, else null.
     * Never resolves a host name (no DNS on the caller's thread): a name other than the RPC host as configured is
     * not taken for this daemon, and is opened through the network instead, which reaches the same segment.
     */
    @Override
    public ClientSession localSegment(final SessionAddress address)
    {
        final Port port = byPort.get(address.port());
        return port != null && isThisHost(address.bareHost()) ? port.session() : null;
    }

    public int size()
    {
        return bySession.size();
    }

    private boolean isThisHost(final String candidate)
    {
        final String bareRpcHost = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
        if (candidate.equals(bareRpcHost))
        {
            return true;
        }
        final InetAddress address = literal(candidate);
        final InetAddress bound = literal(bareRpcHost);
        if (address == null || bound == null)
        {
            return false;
        }
        if (address.equals(bound))
        {
            return true;
        }
        if (!bound.isAnyLocalAddress())
        {
            return false;
        }
        try
        {
            // bound to every address: any address of this host reaches the port
            return address.isLoopbackAddress() || NetworkInterface.getByInetAddress(address) != null;
        }
        catch (final SocketException ex)
        {
            return false;
        }
    }

    private static InetAddress literal(final String host)
    {
        try
        {
            return InetAddress.ofLiteral(host);
        }
        catch (final IllegalArgumentException ex)
        {
            return null;
        }
    }

    private void startAcceptor() throws IOException
    {
        if (acceptor != null)
        {
            return;
        }
        selector = Selector.open();
        acceptor = new Thread(this::acceptLoop, "xferd-segment-ports");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop()
    {
        try
        {
            while (running)
            {
                selector.select();
                closePending();
                final Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext())
                {
                    final SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isValid() && key.isAcceptable())
                    {
                        acceptAll((Port)key.attachment());
                    }
                }
            }
        }
        catch (final IOException | ClosedSelectorException ex)
        {
            if (running)
            {
                LOG.error("segment port acceptor stopped: {}", ex.toString());
            }
        }
    }

    private void acceptAll(final Port port)
    {
        while (true)
        {
            final SocketChannel channel;
            try
            {
                channel = port.channel().accept();
            }
            catch (final IOException ex)
            {
                if (port.channel().isOpen())
                {
                    LOG.warn("accepting on segment port {} failed: {}", port.number(), ex.toString());
                }
                return;
            }
            if (channel == null)
            {
                return;
            }
            if (port.session().isClosed() || bySession.get(port.session()) != port)
            {
                closeQuietly(channel);
                continue;
            }
            try
            {
                channel.configureBlocking(true);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
                server.socketTuning().apply(channel, SocketTuning.peerOf(channel));
                server.serve(channel, port.session(), "xferd-peer-in-" + port.number());
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.warn("cannot serve a connection on segment port {}: {}", port.number(), ex.toString());
                closeQuietly(channel);
            }
        }
    }

    @Override
    public synchronized void close()
    {
        running = false;
        for (final ClientSession session : bySession.keySet())
        {
            close(session);
        }
        if (selector != null)
        {
            try
            {
                selector.close();
            }
            catch (final IOException ignore)
            {
                // closing anyway
            }
        }
    }

    private static void closeQuietly(final java.nio.channels.Channel channel)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
    }
}
