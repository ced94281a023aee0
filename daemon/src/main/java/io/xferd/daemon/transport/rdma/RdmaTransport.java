package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.daemon.transport.tcp.PeerPath;
import io.xferd.daemon.transport.tcp.PeerRpcClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The RDMA transport to other daemons. Opening a peer's segment fetches its descriptor (with an rkey per device
 * for every buffer) over the authenticated RPC connection and, the first time, connects reliable-connected QPs
 * for every (local device, peer device) path with a CONNECT_QP / QP_ANSWER exchange on that connection. A
 * request is checked against the descriptor before anything is posted, then handed to the {@link RdmaAgent},
 * which posts its slices and completes it. Registration of local memory is the {@link RdmaMemoryRegistrar}'s.
 * <p>
 * The answering side of a CONNECT_QP keeps its ("passive") QPs per requester, by the requester's rpc address:
 * a new CONNECT_QP from the same requester at the same or a newer epoch means it abandoned its previous QPs
 * (it reconnects only once none of them is usable, after a restart, or after its own connect failed), so the
 * previous set is moved to ERR and destroyed, which gives their share of the completion queue back. One from an
 * older epoch is refused ({@link StaleQpRequestException}).
 */
public final class RdmaTransport implements PeerTransport
{
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);
    static final int MAX_REQUESTS = 4096;
    static final int MAX_SLICES = 16 * 1024;
    /** Signaled work requests in flight per QP; the send queue is twice as deep, a margin (an overdue QP is aborted). */
    static final int MAX_OUTSTANDING_PER_QP = 64;
    /** The QPs made for a peer's CONNECT_QP only answer its READs and WRITEs: they never post. */
    static final int PASSIVE_SEND_QUEUE_DEPTH = 1;

    private final DaemonContext context;
    private final long epoch;
    private final SystemCounters counters;
    private final RdmaDevices devices;
    private final RdmaMemoryRegistrar registrar;
    private final Function<String, List<String>> preferredNics;
    private final RemoteSegments remoteSegments = new RemoteSegments();
    private final Map<String, RdmaPeer> peers = new ConcurrentHashMap<>();
    /** The answering QPs by requester rpc address; guarded by itself. */
    private final Map<String, PassiveQps> passiveQps = new HashMap<>();
    /** Peers replaced by a reconnect: the agent may still hold their paths, so their QPs go with the transport. */
    private final List<RdmaPeer> retiredPeers = new ArrayList<>();
    private final ManyToOneConcurrentArrayQueue<RdmaRequest> submissions =
        new ManyToOneConcurrentArrayQueue<>(MAX_REQUESTS);
    private final ManyToManyConcurrentArrayQueue<RdmaRequest> requestPool =
        new ManyToManyConcurrentArrayQueue<>(MAX_REQUESTS);
    private final RdmaAgent agent;
    private final AtomicCounter refused;
    private final AtomicCounter connectFailures;
    private final ExecutorService resolver = Executors.newSingleThreadExecutor(runnable ->
        daemonThread(runnable, "xferd-rdma-resolver"));
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(runnable ->
        daemonThread(runnable, "xferd-rdma-watchdog"));
    private volatile TransferJournal journal = TransferJournal.DISABLED;
    private volatile boolean running = true;

    /**
     * @param epoch         this daemon's epoch (its start, as the peer handshake announces it); sent with every
     *                      CONNECT_QP together with {@code context.rpcAddress()}, which names this daemon.
     * @param preferredNics the local devices preferred for memory at a location ("cpu:0"), from the topology.
     */
    public RdmaTransport(
        final DaemonContext context,
        final long epoch,
        final SystemCounters counters,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final RdmaMemoryRegistrar registrar,
        final Function<String, List<String>> preferredNics,
        final NanoClock clock)
    {
        this.context = context;
        this.epoch = epoch;
        this.counters = counters;
        this.registrar = registrar;
        this.devices = registrar.devices();
        this.preferredNics = preferredNics;
        this.refused = counters.get(SystemCounter.REMOTE_ACCESS_REFUSED);
        this.connectFailures = counters.get(SystemCounter.PEER_CONNECTION_FAILURES);
        for (int i = 0; i < MAX_REQUESTS; i++)
        {
            requestPool.offer(new RdmaRequest());
        }
        this.agent = new RdmaAgent(devices, submissions, requestPool, MAX_REQUESTS, MAX_SLICES,
            new CompletionSender(disconnects, counters), counters, () -> journal, clock, context.sliceSize(),
            context.transferTimeoutMs(), MAX_OUTSTANDING_PER_QP);
    }

    @Override
    public String name()
    {
        return "rdma";
    }

    /**
     * @return the agent that posts and polls; the daemon runs it on its own thread.
     */
    public RdmaAgent agent()
    {
        return agent;
    }

    public RdmaDevices devices()
    {
        return devices;
    }

    @Override
    public void journal(final TransferJournal journal)
    {
        this.journal = journal;
    }

    @Override
    public RemoteSegments remoteSegments()
    {
        return remoteSegments;
    }

    @Override
    public int submit(final RemoteRequest submitted)
    {
        final ClientSession submitter = submitted.submitter();
        final long requestId = submitted.requestId();
        final long traceId = submitted.traceId();
        final int opcode = submitted.opcode();
        final Region local = submitted.local();
        final RemoteSegment target = submitted.target();
        final long targetAddress = submitted.targetAddress();
        final long length = submitted.length();
        final long submitNanos = submitted.submitNanos();
        if (!running)
        {
            return TransferStatus.SHUTTING_DOWN;
        }
        if (submitted.notificationLength() > 0)
        {
            return TransferStatus.INVALID_NOTIFY; // notifications are not carried over RDMA yet
        }
        final SegmentDescriptor descriptor = target.descriptor();
        final RdmaPeer peer = descriptor == null ? null : peers.get(descriptor.rpcAddress());
        if (peer == null || peer.epoch != target.epoch() || !peer.isUsable())
        {
            return TransferStatus.TARGET_GONE; // reopening the segment connects the peer anew
        }
        final SegmentDescriptor.Buffer remote = bufferOf(descriptor, targetAddress, length);
        if (remote == null)
        {
            refused.increment();
            return TransferStatus.TARGET_RANGE_NOT_REGISTERED;
        }
        final RegionKeys localKeys = registrar.keysOf(local);
        if (localKeys == null)
        {
            return TransferStatus.LOCAL_RANGE_NOT_REGISTERED;
        }
        final RdmaRequest request = requestPool.poll();
        if (request == null)
        {
            return TransferStatus.TRANSPORT_ERROR;
        }
        request.reset();
        request.submitter = submitter;
        request.local = local;
        request.localKeys = localKeys;
        request.peer = peer;
        request.remote = remote;
        request.requestId = requestId;
        request.batch = submitted.batch();
        request.batchEntry = submitted.batchEntry();
        request.traceId = traceId;
        request.opcode = opcode;
        request.read = opcode == Opcode.READ;
        request.localAddress = submitted.localAddress();
        request.targetAddress = targetAddress;
        request.length = length;
        request.submitNanos = submitNanos;
        request.intakeNanos = submitted.intakeNanos();
        request.paths = peer.pathsFor(preferredNics.apply(local.location()));
        journal.onSliced(submitter.slot(), requestId, traceId,
            (int)((length + context.sliceSize() - 1) / context.sliceSize()), submitNanos);
        if (!submissions.offer(request))
        {
            request.reset();
            requestPool.offer(request);
            return TransferStatus.TRANSPORT_ERROR;
        }
        return TransferStatus.OK;
    }

    /**
     * @return the descriptor's buffer holding all of [address, address + length) with a key for every device of
     * the peer, or null. Allocation-free.
     */
    private static SegmentDescriptor.Buffer bufferOf(
        final SegmentDescriptor descriptor, final long address, final long length)
    {
        final List<SegmentDescriptor.Buffer> buffers = descriptor.buffers();
        if (buffers == null)
        {
            return null;
        }
        for (int i = 0; i < buffers.size(); i++)
        {
            final SegmentDescriptor.Buffer buffer = buffers.get(i);
            if (buffer.contains(address, length))
            {
                final List<String> devices = descriptor.devices();
                return buffer.rkey() != null && devices != null && buffer.rkey().size() == devices.size() ?
                    buffer : null;
            }
        }
        return null;
    }

    @Override
    public void openAsync(final String peerAddress, final String segmentName, final Consumer<Object> onResult)
    {
        resolver.execute(() ->
        {
            try (PeerRpcClient rpc = PeerRpcClient.connect(peerAddress,
                io.xferd.daemon.auth.PeerAuthenticator.of(context, epoch),
                context.transferTimeoutMs(), watchdog))
            {
                final SegmentDescriptor descriptor = rpc.segment(segmentName);
                onResult.accept(open(peerAddress, segmentName, descriptor, request ->
                {
                    try
                    {
                        return rpc.exchange(PeerProtocol.CONNECT_QP, request, PeerProtocol.QP_ANSWER);
                    }
                    catch (final IOException ex)
                    {
                        throw new RdmaConnectException("QP exchange with " + peerAddress + " failed: " +
                            ex.getMessage(), ex);
                    }
                }));
            }
            catch (final IOException | RuntimeException ex)
            {
                onResult.accept(ex.getMessage() == null ? ex.toString() : ex.getMessage());
            }
        });
    }

    /**
     * Make a peer's segment usable: connect QPs to the peer if this transport has none for its current epoch
     * (through {@code exchange}, which carries a CONNECT_QP body to the peer and returns its QP_ANSWER body),
     * and return the segment's handle. Control path.
     *
     * @throws RdmaConnectException when the peer does not serve RDMA or a QP cannot be connected.
     */
    public long open(
        final String peerAddress, final String segmentName, final SegmentDescriptor descriptor,
        final UnaryOperator<byte[]> exchange)
    {
        if (!"rdma".equals(descriptor.protocol()) || descriptor.devices() == null || descriptor.devices().isEmpty())
        {
            throw new RdmaConnectException("peer " + peerAddress + " serves " + descriptor.protocol() +
                ", not rdma with devices; this daemon runs protocol rdma (both ends must)");
        }
        synchronized (peers)
        {
            final RdmaPeer existing = peers.get(descriptor.rpcAddress());
            if (existing == null || existing.epoch != descriptor.epoch() || !existing.isUsable())
            {
                final RdmaPeer peer = connect(peerAddress, descriptor, exchange);
                peers.put(descriptor.rpcAddress(), peer);
                if (existing != null)
                {
                    // restarted, or every QP broken (in ERR): the agent may still see the old paths until their
                    // completions or timeouts, so their QPs are destroyed with the transport, not now
                    retiredPeers.add(existing);
                }
                LOG.info("RDMA peer {} connected: {}", peerAddress, peer);
            }
        }
        return remoteSegments.add(new RemoteSegment(
            segmentName.isEmpty() ? peerAddress : peerAddress + "/" + segmentName, null, descriptor.handle(),
            descriptor.epoch(), descriptor));
    }

    private RdmaPeer connect(
        final String peerAddress, final SegmentDescriptor descriptor, final UnaryOperator<byte[]> exchange)
    {
        final List<String> peerDevices = descriptor.devices();
        final int qpsPerPath = context.connectionsPerPeer();
        final RdmaQueuePair[][] qps = new RdmaQueuePair[devices.size()][qpsPerPath];
        final List<QpEndpoint> request = new ArrayList<>();
        try
        {
            for (int d = 0; d < devices.size(); d++)
            {
                final String peerNic = peerDevices.get(d % peerDevices.size());
                for (int q = 0; q < qpsPerPath; q++)
                {
                    qps[d][q] = devices.get(d).createQueuePair(2 * MAX_OUTSTANDING_PER_QP);
                    request.add(withPeerNic(qps[d][q].local(), peerNic));
                }
            }
            final List<QpEndpoint> answer = QpExchangeCodec.decode(exchange.apply(
                QpExchangeCodec.encodeRequest(context.rpcAddress(), epoch, request)));
            if (answer.size() != request.size())
            {
                throw new MalformedQpFrameException("peer " + peerAddress + " answered " + answer.size() +
                    " QP endpoints for " + request.size());
            }
            for (int d = 0, e = 0; d < devices.size(); d++)
            {
                final String peerNic = peerDevices.get(d % peerDevices.size());
                for (int q = 0; q < qpsPerPath; q++, e++)
                {
                    final QpEndpoint remote = answer.get(e);
                    if (!remote.nic().equals(peerNic))
                    {
                        throw new MalformedQpFrameException("peer " + peerAddress + " answered endpoint " + e +
                            " from " + remote.nic() + ", asked for " + peerNic);
                    }
                    qps[d][q].connect(remote);
                }
            }
            final RdmaPath[] paths = new RdmaPath[devices.size()];
            for (int d = 0; d < devices.size(); d++)
            {
                final String localNic = devices.get(d).name();
                final String peerNic = peerDevices.get(d % peerDevices.size());
                final String label = "path " + localNic + " -> " + peerNic + " (peer " + peerAddress + ")";
                paths[d] = new RdmaPath(d, localNic, d % peerDevices.size(), peerNic, qps[d], journal.nameId(localNic),
                    counters.newCounter(label + " bytes", PeerPath.BYTES_TYPE_ID),
                    counters.newCounter(label + " failures", PeerPath.FAILURES_TYPE_ID));
            }
            return new RdmaPeer(peerAddress, descriptor.epoch(), List.copyOf(peerDevices), paths,
                journal.nameId(peerAddress));
        }
        catch (final RuntimeException ex)
        {
            connectFailures.increment();
            for (final RdmaQueuePair[] row : qps)
            {
                for (final RdmaQueuePair qp : row)
                {
                    if (qp != null)
                    {
                        qp.close();
                    }
                }
            }
            throw ex instanceof RdmaConnectException connect ? connect :
                new RdmaConnectException("connecting RDMA QPs to " + peerAddress + " failed: " + ex.getMessage(), ex);
        }
    }

    /**
     * The server side of the QP exchange (a CONNECT_QP body in, a QP_ANSWER body out): one QP per requested
     * endpoint on the device it names, connected to the requester's QP. The QPs answered to the same requester
     * before are moved to ERR and destroyed first (the request's epoch is the same as theirs or newer). Control
     * path; any thread (serialized).
     *
     * @throws StaleQpRequestException when the requester's epoch is older than one seen from it; its QPs stay.
     * @throws RdmaConnectException    when the request is malformed ({@link MalformedQpFrameException}), names a
     *                                 device this daemon lacks, or a QP cannot be connected; nothing is left half
     *                                 made.
     */
    public byte[] acceptConnect(final byte[] body)
    {
        final QpExchangeCodec.ConnectRequest request = QpExchangeCodec.decodeRequest(body);
        synchronized (passiveQps)
        {
            if (!running)
            {
                throw new RdmaConnectException("daemon shutting down: no QPs for " + request.requester());
            }
            final PassiveQps previous = passiveQps.get(request.requester());
            if (previous != null)
            {
                if (request.epoch() < previous.epoch)
                {
                    connectFailures.increment();
                    throw new StaleQpRequestException("QP request from " + request.requester() + " at epoch " +
                        request.epoch() + ", older than its epoch " + previous.epoch + " seen before: refused");
                }
                // the requester abandoned these (it reconnects only when none is usable, after a restart, or
                // after its connect failed); its QPs may still have work in flight towards them: ERR flushes it
                passiveQps.remove(request.requester());
                destroy(previous.qps);
                LOG.info("RDMA requester {} (epoch {}) connects again: destroyed its {} previous answering QPs " +
                    "(epoch {})", request.requester(), request.epoch(), previous.qps.size(), previous.epoch);
            }
            final List<RdmaQueuePair> made = new ArrayList<>(request.endpoints().size());
            final List<QpEndpoint> answer = new ArrayList<>(request.endpoints().size());
            try
            {
                for (final QpEndpoint remote : request.endpoints())
                {
                    final int device = devices.names().indexOf(remote.peerNic());
                    if (device < 0)
                    {
                        throw new RdmaConnectException("QP requested on RDMA device " + remote.peerNic() +
                            ", this daemon serves " + devices.names());
                    }
                    final RdmaQueuePair qp = devices.get(device).createQueuePair(PASSIVE_SEND_QUEUE_DEPTH);
                    made.add(qp);
                    qp.connect(remote);
                    answer.add(withPeerNic(qp.local(), remote.nic()));
                }
            }
            catch (final RuntimeException ex)
            {
                connectFailures.increment();
                made.forEach(RdmaQueuePair::close);
                // remember the epoch, so that an older one stays refused
                passiveQps.put(request.requester(), new PassiveQps(request.epoch(), List.of()));
                throw ex instanceof RdmaConnectException connect ? connect :
                    new RdmaConnectException("accepting RDMA QPs failed: " + ex.getMessage(), ex);
            }
            passiveQps.put(request.requester(), new PassiveQps(request.epoch(), List.copyOf(made)));
            return QpExchangeCodec.encode(answer);
        }
    }

    /**
     * @return how many answering QPs are open, over all requesters. Any thread.
     */
    public int passiveQueuePairs()
    {
        synchronized (passiveQps)
        {
            int count = 0;
            for (final PassiveQps set : passiveQps.values())
            {
                count += set.qps.size();
            }
            return count;
        }
    }

    /**
     * ERR first, so that the NIC flushes what the requester still had in flight on them, then destroy (which
     * releases each QP's share of its device's completion queue). Passive QPs post nothing themselves, so no
     * completion of theirs can reach the agent.
     */
    private static void destroy(final List<RdmaQueuePair> qps)
    {
        for (final RdmaQueuePair qp : qps)
        {
            qp.abort();
        }
        for (final RdmaQueuePair qp : qps)
        {
            qp.close();
        }
    }

    /**
     * @return how a region is described to peers: its range and location and its keys, one per device.
     */
    public SegmentDescriptor.Buffer describe(final Region region)
    {
        final RegionKeys keys = registrar.keysOf(region);
        return new SegmentDescriptor.Buffer(region.ownerAddress(), region.length(), region.location(),
            keys == null ? null : keys.lkeyList(), keys == null ? null : keys.rkeyList());
    }

    private static QpEndpoint withPeerNic(final QpEndpoint local, final String peerNic)
    {
        return new QpEndpoint(local.nic(), peerNic, local.lid(), local.gid(), local.qpn(), local.psn(), local.mtu());
    }

    /**
     * Stop taking requests. The agent's runner answers what is still in flight when it closes; call
     * {@link #close()} after it stopped.
     */
    public void stop()
    {
        running = false;
        agent.stop();
    }

    /**
     * Destroy every QP and deregister all memory. Call after the agent's runner is closed.
     */
    @Override
    public void close()
    {
        stop();
        resolver.shutdownNow();
        watchdog.shutdownNow();
        synchronized (peers)
        {
            peers.values().forEach(RdmaPeer::close);
            peers.clear();
            retiredPeers.forEach(RdmaPeer::close);
            retiredPeers.clear();
        }
        synchronized (passiveQps)
        {
            passiveQps.values().forEach(set -> set.qps.forEach(RdmaQueuePair::close));
            passiveQps.clear();
        }
        registrar.close();
        devices.close();
        LOG.debug("rdma transport closed");
    }

    /**
     * The answering QPs made for one requester, and the epoch it connected them at.
     */
    private record PassiveQps(long epoch, List<RdmaQueuePair> qps)
    {
    }

    private static Thread daemonThread(final Runnable runnable, final String name)
    {
        final Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        return thread;
    }
}
