package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.storage.StorageStage;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.SegmentDescriptor;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The daemon's RPC listener: accepts peer daemons on the RPC port and serves each connection on its own thread
 * (handshake, descriptors, then WRITE/READ/NOTIFY straight into and out of registered memory).
 * <p>
 * What a stranger can make it spend is bounded before it authenticates: at most {@link PeerConnectionLimits}
 * connections (and threads) at once, of which a few in the handshake, each closed when its handshake takes longer
 * than the transfer timeout; a HELLO is read only up to a few hundred bytes. After the handshake, a peer that
 * stalls in the middle of a frame (a WRITE's payload that stops coming, a READ answer it does not take) is cut
 * off after the transfer timeout, which releases the memory its frame borrowed.
 */
public final class PeerServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerServer.class);

    private final ServerSocketChannel listener;
    private final java.util.List<ServerSocketChannel> nicListeners = new java.util.ArrayList<>();
    private final java.util.List<Thread> acceptors = new java.util.ArrayList<>();
    private final Thread acceptor;
    private final Set<PeerSessionHandler> handlers = ConcurrentHashMap.newKeySet();
    private final PeerConnectionLimits limits;
    private final java.util.concurrent.ScheduledExecutorService deadlines =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "xferd-peer-deadlines");
            thread.setDaemon(true);
            return thread;
        });
    private final DaemonContext context;
    private final SessionTable registry;
    private final SystemCounters counters;
    private final ManyToOneConcurrentArrayQueue<io.xferd.daemon.session.ClientSession> disconnects;
    private final PeerAuthenticator authenticator;
    private final long epoch;
    private final String advertisedAddress;
    private final LocalNics localNics;
    private final java.util.Map<Integer, PeerRequestHandler> requestHandlers = new ConcurrentHashMap<>();
    private volatile String describedProtocol;
    private volatile java.util.List<String> describedDevices;
    private volatile java.util.function.Function<io.xferd.daemon.memory.Region, SegmentDescriptor.Buffer> bufferDescriber =
        region -> new SegmentDescriptor.Buffer(region.ownerAddress(), region.length(), region.location());
    private volatile boolean running = true;
    private final SegmentListeners segmentListeners;
    private final SocketTuning socketTuning;
    // the time deadlines are measured on (handshakes, frames stalled in the middle): tests move it
    private final NanoClock clock;
    private volatile StorageStage storageStage;
    // what all connections' file READs and WRITEs may hold in buffers together
    private final FileBufferBudget fileBuffers = new FileBufferBudget(FileSegmentResponder.DAEMON_BUDGET_BYTES);

    public PeerServer(
        final DaemonContext context,
        final SessionTable registry,
        final SystemCounters counters,
        final ManyToOneConcurrentArrayQueue<io.xferd.daemon.session.ClientSession> disconnects,
        final long epoch,
        final LocalNics localNics)
    {
        this(context, registry, counters, disconnects, epoch, localNics, SystemNanoClock.INSTANCE);
    }

    public PeerServer(
        final DaemonContext context,
        final SessionTable registry,
        final SystemCounters counters,
        final ManyToOneConcurrentArrayQueue<io.xferd.daemon.session.ClientSession> disconnects,
        final long epoch,
        final LocalNics localNics,
        final NanoClock clock)
    {
        this.clock = clock;
        this.context = context;
        this.socketTuning = new SocketTuning(context.tcpCongestion());
        this.localNics = localNics;
        this.registry = registry;
        this.counters = counters;
        this.disconnects = disconnects;
        this.authenticator = PeerAuthenticator.of(context, epoch);
        this.epoch = epoch;
        this.describedProtocol = context.protocol();
        this.describedDevices = context.deviceNames();
        this.segmentListeners = new SegmentListeners(this, context.rpcHost(), context.maxClients());
        this.limits = new PeerConnectionLimits(context.maxPeerConnections());
        try
        {
            listener = ServerSocketChannel.open();
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            // before bind and listen: a peer that connects at once handshakes on the configured algorithm too
            socketTuning.applyToListener(listener);
            listener.bind(new InetSocketAddress(context.rpcHost(), context.rpcPort()), 128);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot listen on rpc address " + context.rpcAddress() + ": " +
                ex.getMessage() + " (choose another with --rpc-address)", ex);
        }
        final int port = ((InetSocketAddress)listenerAddress()).getPort();
        this.advertisedAddress = context.rpcHost() + ":" + port;
        this.acceptor = new Thread(() -> acceptLoop(listener), "xferd-peer-acceptor");
        this.acceptor.setDaemon(true);
        // peers reach this daemon on each striping NIC's own address too, on the same port
        for (final LocalNics.Nic nic : localNics.nics())
        {
            if (nic.address().equals(context.rpcHost()))
            {
                continue;
            }
            try
            {
                final ServerSocketChannel nicListener = ServerSocketChannel.open();
                nicListener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                socketTuning.applyToListener(nicListener);
                nicListener.bind(new InetSocketAddress(nic.address(), port), 128);
                nicListeners.add(nicListener);
                final Thread thread = new Thread(() -> acceptLoop(nicListener), "xferd-peer-acceptor-" + nic.name());
                thread.setDaemon(true);
                acceptors.add(thread);
            }
            catch (final IOException ex)
            {
                close();
                throw new UncheckedIOException("cannot listen on " + nic.name() + " (" + nic.address() + ":" + port +
                    "): " + ex.getMessage(), ex);
            }
        }
    }

    /**
     * @return the threads accepting peer connections (the RPC port and each striping NIC's), for the daemon to watch.
     */
    public java.util.List<Thread> acceptorThreads()
    {
        final java.util.List<Thread> all = new java.util.ArrayList<>(acceptors);
        all.add(0, acceptor);
        return all;
    }

    public void start()
    {
        final long period = Math.max(10, context.transferTimeoutMs() / 10);
        deadlines.scheduleAtFixedRate(() -> checkDeadlines(clock.nanoTime()), period, period,
            java.util.concurrent.TimeUnit.MILLISECONDS);
        acceptor.start();
        acceptors.forEach(Thread::start);
        if (authenticator.authenticates())
        {
            LOG.info("peer listener on {} (epoch {}; peers must prove the cluster token)", advertisedAddress, epoch);
        }
        else
        {
            LOG.warn("peer listener on {} (epoch {}) WITHOUT PEER AUTHENTICATION (--insecure-no-peer-auth): anyone " +
                "who reaches this port can read and write the memory of every client of this daemon",
                advertisedAddress, epoch);
        }
    }

    /**
     * @return host:port peers reach this daemon at (the real port when the configured one was 0).
     */
    public String advertisedAddress()
    {
        return advertisedAddress;
    }

    private java.net.SocketAddress listenerAddress()
    {
        try
        {
            return listener.getLocalAddress();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private void acceptLoop(final ServerSocketChannel listener)
    {
        int connectionId = 0;
        while (running)
        {
            try
            {
                final SocketChannel channel = listener.accept();
                if (!limits.tryAdmit())
                {
                    // over the cap: cut off at once, before a thread or a buffer is spent on it
                    closeQuietly(channel);
                    limits.refusedOne(LOG, clock.nanoTime());
                    continue;
                }
                final PeerSessionHandler handler;
                try
                {
                    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
                    socketTuning.apply(channel, SocketTuning.peerOf(channel));
                    handler = new PeerSessionHandler(channel, this, registry,
                        new CompletionSender(disconnects, counters), counters, clock.nanoTime());
                }
                catch (final IOException | RuntimeException ex)
                {
                    limits.handshakeEnded();
                    limits.closed();
                    closeQuietly(channel);
                    LOG.warn("could not serve a peer connection: {}", ex.toString());
                    continue;
                }
                handlers.add(handler);
                final Thread thread = new Thread(handler, "xferd-peer-in-" + (++connectionId));
                thread.setDaemon(true);
                handler.thread(thread);
                thread.start();
            }
            catch (final ClosedChannelException ex)
            {
                return;
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    LOG.warn("accepting a peer connection failed: {}", ex.toString());
                }
            }
        }
    }

    /**
     * @return the per-segment RPC ports (Mooncake sessions) of this daemon's clients.
     */
    public SegmentListeners segmentListeners()
    {
        return segmentListeners;
    }

    /**
     * Serve a connection accepted on {@code pinned}'s segment port, on its own thread, as one on the RPC port
     * except that a descriptor fetch answers with that segment whatever name it asks for.
     */
    void serve(final SocketChannel channel, final io.xferd.daemon.session.ClientSession pinned, final String threadName)
    {
        // the same connection limits as the RPC port: a segment's port is no way around them
        if (!limits.tryAdmit())
        {
            closeQuietly(channel);
            limits.refusedOne(LOG, clock.nanoTime());
            return;
        }
        final PeerSessionHandler handler;
        try
        {
            handler = new PeerSessionHandler(channel, this, registry, new CompletionSender(disconnects, counters),
                counters, clock.nanoTime(), pinned);
        }
        catch (final RuntimeException ex)
        {
            limits.handshakeEnded();
            limits.closed();
            closeQuietly(channel);
            LOG.warn("could not serve a connection on a segment port: {}", ex.toString());
            return;
        }
        handlers.add(handler);
        if (pinned.isClosed() || !running)
        {
            // its port closed while this connection was being accepted: closeConnectionsOf may have missed it
            limits.handshakeEnded();
            closed(handler);
            handler.close();
            return;
        }
        final Thread thread = new Thread(handler, threadName);
        thread.setDaemon(true);
        handler.thread(thread);
        thread.start();
    }

    /**
     * End the connections accepted on {@code session}'s segment port (the port itself was closed).
     */
    void closeConnectionsOf(final io.xferd.daemon.session.ClientSession session)
    {
        for (final PeerSessionHandler handler : handlers)
        {
            if (handler.pinned() == session)
            {
                handler.close();
            }
        }
    }

    /**
     * @return the descriptor of a client's segment as peers and the metadata store get it. Any thread: it reads
     * the session's current (copy-on-write) region table.
     */
    public SegmentDescriptor describe(final io.xferd.daemon.session.ClientSession session)
    {
        final io.xferd.daemon.memory.RegionTable regions = session.regions();
        final java.util.List<SegmentDescriptor.Buffer> buffers = new java.util.ArrayList<>();
        for (int i = 0; i < regions.size(); i++)
        {
            final io.xferd.daemon.memory.Region region = regions.get(i);
            buffers.add(bufferDescriber.apply(region));
        }
        return new SegmentDescriptor(SegmentDescriptor.VERSION, advertisedAddress + "/" + session.segmentName(),
            describedProtocol, advertisedAddress, epoch, session.segmentHandle(), describedDevices,
            localNics.nics().stream().map(nic -> new SegmentDescriptor.Nic(nic.name(), nic.address())).toList(),
            buffers, localNics.matrixJson());
    }

    /**
     * What descriptors say about the transport that runs (before {@link #start()}): its protocol, its devices
     * and how a region is described (the RDMA transport adds its keys).
     */
    public void describeWith(
        final String protocol,
        final java.util.List<String> devices,
        final java.util.function.Function<io.xferd.daemon.memory.Region, SegmentDescriptor.Buffer> buffers)
    {
        this.describedProtocol = protocol;
        this.describedDevices = java.util.List.copyOf(devices);
        this.bufferDescriber = buffers;
    }

    /**
     * Serve requests of {@code type} (a transport's own, e.g. {@link PeerProtocol#CONNECT_QP}) with {@code handler},
     * answering with frames of {@code type + 1}.
     */
    public void handle(final int type, final PeerRequestHandler handler)
    {
        requestHandlers.put(type, handler);
    }

    PeerRequestHandler handler(final int type)
    {
        return requestHandlers.get(type);
    }

    /**
     * The handler's handshake ended (admitted or not): its handshake slot is free.
     */
    void handshakeEnded(final PeerSessionHandler handler)
    {
        limits.handshakeEnded();
    }

    void closed(final PeerSessionHandler handler)
    {
        if (handlers.remove(handler))
        {
            limits.closed();
        }
    }

    /**
     * Cut off every connection past a deadline: a handshake longer than the transfer timeout, or a frame stalled in
     * the middle for longer. Called by the deadline thread.
     */
    NanoClock clock()
    {
        return clock;
    }

    void checkDeadlines(final long nowNanos)
    {
        final long timeoutNanos = context.transferTimeoutMs() * 1_000_000L;
        for (final PeerSessionHandler handler : handlers)
        {
            handler.checkDeadline(nowNanos, timeoutNanos);
        }
    }

    /**
     * @return the connections served now (tests).
     */
    int connections()
    {
        return handlers.size();
    }

    /**
     * @return the gathering writes of answers made by the connections served now (tests).
     */
    long answerWrites()
    {
        long writes = 0;
        for (final PeerSessionHandler handler : handlers)
        {
            writes += handler.answerWrites();
        }
        return writes;
    }

    private static void closeQuietly(final SocketChannel channel)
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

    PeerAuthenticator authenticator()
    {
        return authenticator;
    }

    long epoch()
    {
        return epoch;
    }

    LocalNics localNics()
    {
        return localNics;
    }

    /**
     * @return the socket options of peer connections, shared with the segment ports' listeners.
     */
    SocketTuning socketTuning()
    {
        return socketTuning;
    }

    DaemonContext context()
    {
        return context;
    }

    /**
     * Serve peers' READs and WRITEs of file regions through the daemon's storage stage (before {@link #start()});
     * without one they are read and written on each connection's thread.
     */
    public void storageStage(final StorageStage stage)
    {
        this.storageStage = stage;
    }

    StorageStage storageStage()
    {
        return storageStage;
    }

    FileBufferBudget fileBuffers()
    {
        return fileBuffers;
    }

    @Override
    public void close()
    {
        running = false;
        segmentListeners.close();
        try
        {
            listener.close();
            for (final ServerSocketChannel nicListener : nicListeners)
            {
                nicListener.close();
            }
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
        deadlines.shutdownNow();
        for (final PeerSessionHandler handler : handlers)
        {
            handler.close();
        }
        // the handlers touch counters and registered memory until they end: wait for them (bounded) before the
        // daemon unmaps either
        final long deadline = System.nanoTime() + 5_000_000_000L;
        for (final PeerSessionHandler handler : handlers)
        {
            handler.awaitEnd(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
    }

    SystemCounters counters()
    {
        return counters;
    }
}
