package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.transport.CoalescedRequests;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The TCP transport to other daemons: cuts each remote request into slices, spreads them over the peer's
 * pooled connections, and writes the request's completion when the last slice is answered (a WRITE only once
 * the target acknowledged that its bytes are in memory; a READ only once every byte arrived). A watchdog fails
 * connections that wait past the transfer timeout, so nothing hangs. Requests and slices come from pools.
 * GPU memory goes through each peer thread's {@link StagingBuffer} on either side.
 */
public final class TcpTransport implements PeerTransport
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);
    private static final int TRANSFER_POOL = 16 * 1024;
    private static final int SLICE_POOL = 16 * 1024;

    private final DaemonContext context;
    private final SystemCounters counters;
    private final PeerAuthenticator authenticator;
    private final SocketTuning socketTuning;
    private final RemoteSegments remoteSegments = new RemoteSegments();
    private final Map<String, PeerLink> links = new ConcurrentHashMap<>();
    // descriptor fetches under way, with when each started on the clock: the watchdog closes those past the timeout
    private final Map<SocketChannel, Long> fetchesStartedNanos = new ConcurrentHashMap<>();
    private final ManyToManyConcurrentArrayQueue<RemoteTransfer> transfers =
        new ManyToManyConcurrentArrayQueue<>(TRANSFER_POOL);
    // made on demand, so the pool is as large as the most transfers ever in flight at once (up to TRANSFER_POOL):
    // made up front they were 16K objects, each with its notify buffer, at every start
    private final AtomicInteger transfersMade = new AtomicInteger();
    // requests in flight here that need nothing more from the data plane's threads: this transport writes their
    // completions itself (a batch that holds back its last entry needs intake to publish it: not counted)
    private final java.util.concurrent.atomic.AtomicLong answeredOnItsOwn = new java.util.concurrent.atomic.AtomicLong();
    private final ManyToManyConcurrentArrayQueue<Slice> slices = new ManyToManyConcurrentArrayQueue<>(SLICE_POOL);
    private final ThreadLocal<CompletionSender> senders;
    private final ExecutorService resolver = Executors.newSingleThreadExecutor(runnable ->
    {
        final Thread thread = new Thread(runnable, "xferd-peer-resolver");
        thread.setDaemon(true);
        return thread;
    });
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(runnable ->
    {
        final Thread thread = new Thread(runnable, "xferd-peer-watchdog");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicCounter completed;
    private final AtomicCounter failed;
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final long sliceSize;
    private final LocalNics localNics;
    // every time the TCP code reads (slice sent, deadlines, reconnect back-off, journal stamps): tests move it
    private final NanoClock clock;
    private volatile io.xferd.daemon.journal.TransferJournal journal = io.xferd.daemon.journal.TransferJournal.DISABLED;
    private volatile boolean running = true;
    private static final int MAX_ATTEMPTS = 3;

    public TcpTransport(
        final DaemonContext context,
        final SystemCounters counters,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final LocalNics localNics,
        final PeerAuthenticator authenticator)
    {
        this(context, counters, disconnects, localNics, authenticator, SystemNanoClock.INSTANCE);
    }

    public TcpTransport(
        final DaemonContext context,
        final SystemCounters counters,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final LocalNics localNics,
        final PeerAuthenticator authenticator,
        final NanoClock clock)
    {
        this.clock = clock;
        this.context = context;
        this.localNics = localNics;
        this.counters = counters;
        this.authenticator = authenticator;
        this.socketTuning = new SocketTuning(context.tcpCongestion());
        SocketTuning.logInForce(context.tcpCongestion());
        this.senders = ThreadLocal.withInitial(() -> new CompletionSender(disconnects, counters));
        this.sliceSize = context.sliceSize();
        this.completed = counters.get(SystemCounter.REQUESTS_COMPLETED);
        this.failed = counters.get(SystemCounter.REQUESTS_FAILED);
        this.bytesRead = counters.get(SystemCounter.BYTES_READ);
        this.bytesWritten = counters.get(SystemCounter.BYTES_WRITTEN);
        for (int i = 0; i < SLICE_POOL; i++)
        {
            slices.offer(new Slice(i));
        }
        final long period = Math.max(10, context.transferTimeoutMs() / 10);
        watchdog.scheduleAtFixedRate(this::checkTimeouts, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Where remote requests' slices and completions are journaled (before the first peer is opened).
     */
    @Override
    public String name()
    {
        return "tcp";
    }

    @Override
    public void journal(final io.xferd.daemon.journal.TransferJournal journal)
    {
        this.journal = journal;
    }

    io.xferd.daemon.journal.TransferJournal journal()
    {
        return journal;
    }

    @Override
    public RemoteSegments remoteSegments()
    {
        return remoteSegments;
    }

    /**
     * Start a remote request. On {@link TransferStatus#OK} the transport owns the submitter's borrow and the local
     * region's borrow until it writes the completion; on any other status nothing was taken.
     */
    @Override
    public int submit(final RemoteRequest request)
    {
        if (!running)
        {
            return TransferStatus.SHUTTING_DOWN;
        }
        RemoteTransfer transfer = transfers.poll();
        if (transfer == null && (transfer = newTransfer()) == null)
        {
            return TransferStatus.TRANSPORT_ERROR;
        }
        final ClientSession submitter = request.submitter();
        final long requestId = request.requestId();
        final long traceId = request.traceId();
        final long targetAddress = request.targetAddress();
        final long length = request.length();
        final RemoteSegment target = request.target();
        transfer.reset();
        transfer.submitter = submitter;
        transfer.local = request.local();
        transfer.target = target;
        transfer.remotePreferred = target.preferredNicsFor(targetAddress);
        transfer.requestId = requestId;
        transfer.batch = request.batch();
        transfer.batchEntry = request.batchEntry();
        transfer.traceId = traceId;
        transfer.opcode = request.opcode();
        transfer.localAddress = request.localAddress();
        transfer.targetAddress = targetAddress;
        transfer.length = length;
        transfer.intakeNanos = request.intakeNanos();
        transfer.submitNanos = request.submitNanos();
        final CoalescedRequests members = request.members();
        if (members != null)
        {
            transfer.members.copyFrom(members);
        }
        final int notifyLength = request.notificationLength();
        if (transfer.opcode == Opcode.WRITE && notifyLength > 0)
        {
            request.notification().getBytes(0, transfer.notify, 0, notifyLength);
            transfer.notifyLength = notifyLength;
        }
        transfer.answeredOnItsOwn = answersOnItsOwn(transfer) ? Math.max(1, transfer.members.count()) : 0;
        if (transfer.answeredOnItsOwn > 0)
        {
            answeredOnItsOwn.getAndAdd(transfer.answeredOnItsOwn); // before a slice can finish it
        }
        final int sliceCount = (int)((length + sliceSize - 1) / sliceSize);
        transfer.pendingSlices.set(sliceCount);
        journal.onSliced(submitter.slot(), requestId, traceId, sliceCount, clock.nanoTime());
        for (int i = 0; i < sliceCount; i++)
        {
            final long offset = i * sliceSize;
            enqueue(transfer, Slice.DATA, offset, Math.min(sliceSize, length - offset));
        }
        return TransferStatus.OK;
    }

    private void enqueue(final RemoteTransfer transfer, final int kind, final long offset, final long length)
    {
        Slice slice;
        while ((slice = slices.poll()) == null)
        {
            java.util.concurrent.locks.LockSupport.parkNanos(10_000);
        }
        slice.transfer = transfer;
        slice.kind = kind;
        slice.offset = offset;
        slice.length = length;
        slice.attempts = 1;
        if (slice.stagingFailure != TransferStatus.OK)
        {
            slice.stagingFailure = TransferStatus.OK;
        }
        final PeerPath path = ((PeerLink)transfer.target.link()).choosePath(
            localNics.preferred(transfer.local.location()), transfer.remotePreferred, null, clock.nanoTime());
        if (path == null)
        {
            finishSlice(slice, TransferStatus.TRANSPORT_ERROR, null);
            return;
        }
        send(slice, path);
    }

    private static void send(final Slice slice, final PeerPath path)
    {
        path.queued(slice.length);
        final RemoteTransfer transfer = slice.transfer;
        final PeerConnection connection =
            path.connectionFor(transfer.submitter == null ? -1 : transfer.submitter.slot(), transfer.traceId);
        if (connection.trySendInline(slice))
        {
            return;
        }
        while (!connection.offer(slice))
        {
            java.util.concurrent.locks.LockSupport.parkNanos(10_000);
        }
    }

    /**
     * A slice was answered (or failed) on a path: a slice the path failed is retried on another usable path
     * (a bounded number of times); otherwise it returns to the pool and, if it was the request's last, the
     * request is finished. Any thread.
     */
    void finishSlice(final Slice slice, final int status, final PeerPath path)
    {
        final RemoteTransfer transfer = slice.transfer;
        if (path != null)
        {
            path.answered(slice.length, status == TransferStatus.OK);
            transfer.lastNicId = path.journalNicId();
            journal.onSlice(transfer.submitter.slot(), transfer.requestId, transfer.traceId,
                (int)(slice.offset / sliceSize), ((PeerLink)transfer.target.link()).journalPeerId(), path.journalNicId(),
                slice.length, slice.sentNanos, clock.nanoTime(), status);
        }
        if (status == TransferStatus.TRANSPORT_ERROR && running && slice.attempts < MAX_ATTEMPTS && path != null)
        {
            final PeerPath other = ((PeerLink)transfer.target.link()).choosePath(
                localNics.preferred(transfer.local.location()), transfer.remotePreferred, path, clock.nanoTime());
            if (other != null && other != path)
            {
                slice.attempts++;
                send(slice, other);
                return;
            }
        }
        slice.transfer = null;
        slice.generation++;
        slices.offer(slice);
        if (transfer.sliceDone(status))
        {
            finishTransfer(transfer);
        }
    }

    private void finishTransfer(final RemoteTransfer transfer)
    {
        final int status = transfer.firstError.get();
        if (status == TransferStatus.OK && transfer.notifyLength > 0 && !transfer.notifySent)
        {
            transfer.notifySent = true;
            transfer.pendingSlices.set(1);
            enqueue(transfer, Slice.NOTIFY, 0, 0);
            return;
        }
        if (transfer.answeredOnItsOwn > 0)
        {
            // before the completions count it: in between it looks in flight elsewhere, which keeps intake awake (the
            // other order could show a sleeping intake nothing in flight while a local request still was)
            answeredOnItsOwn.getAndAdd(-transfer.answeredOnItsOwn);
        }
        final ClientSession submitter = transfer.submitter;
        final CoalescedRequests members = transfer.members;
        if (members.count() == 0)
        {
            complete(transfer, transfer.requestId, transfer.batch, transfer.batchEntry, transfer.length,
                transfer.submitNanos, transfer.intakeNanos, status);
        }
        else
        {
            // every byte of the merged range arrived (or the transfer failed): each request is answered on its own
            for (int i = 0, n = members.count(); i < n; i++)
            {
                complete(transfer, members.requestId(i), members.batch(i), members.batchEntry(i), members.length(i),
                    members.submitNanos(i), members.intakeNanos(i), status);
            }
        }
        transfer.local.release();
        submitter.release();
        transfer.reset();
        transfers.offer(transfer);
    }

    /**
     * @return true unless a request in the transfer is an entry of a batch that holds back its last entry (which
     * intake publishes once the others landed).
     */
    private static boolean answersOnItsOwn(final RemoteTransfer transfer)
    {
        if (transfer.batch != null && transfer.batch.holdsBackLast)
        {
            return false;
        }
        final CoalescedRequests members = transfer.members;
        for (int i = 0, n = members.count(); i < n; i++)
        {
            final io.xferd.daemon.session.BatchTracker batch = members.batch(i);
            if (batch != null && batch.holdsBackLast)
            {
                return false;
            }
        }
        return true;
    }

    @Override
    public long requestsAnsweredOnItsOwn()
    {
        return answeredOnItsOwn.get();
    }

    /**
     * @return a new transfer for the pool, or null when TRANSFER_POOL are in flight already.
     */
    private RemoteTransfer newTransfer()
    {
        for (int made = transfersMade.get(); made < TRANSFER_POOL; made = transfersMade.get())
        {
            if (transfersMade.compareAndSet(made, made + 1))
            {
                return new RemoteTransfer();
            }
        }
        return null;
    }

    private void complete(final RemoteTransfer transfer, final long requestId,
        final io.xferd.daemon.session.BatchTracker batch, final int batchEntry, final long length,
        final long submitNanos, final long intakeNanos, final int status)
    {
        final long bytes = status == TransferStatus.OK ? length : 0;
        if (status == TransferStatus.OK)
        {
            completed.increment();
            (transfer.opcode == Opcode.READ ? bytesRead : bytesWritten).getAndAdd(bytes);
        }
        else
        {
            failed.increment();
        }
        final long completeNanos = clock.nanoTime();
        final ClientSession submitter = transfer.submitter;
        senders.get().complete(submitter, batch, batchEntry, requestId, status, bytes, intakeNanos, completeNanos);
        journal.onCompleted(submitter.slot(), requestId, transfer.traceId, transfer.opcode, status, length, bytes,
            ((PeerLink)transfer.target.link()).journalPeerId(), transfer.lastNicId, submitNanos, intakeNanos,
            completeNanos);
    }

    /**
     * A slice whose bytes could not be staged through device or process memory on this side: it fails with
     * {@code status}, and is not retried on another path, which would not help (the path is not at fault).
     */
    void failStaging(final Slice slice, final PeerPath path, final int status)
    {
        slice.attempts = MAX_ATTEMPTS;
        finishSlice(slice, status, path);
    }

    /**
     * Ask the daemon at {@code host:port} for a segment's descriptor, off the caller's thread; the answer (a
     * handle, or an error message) goes to {@code onResult} on the resolver thread. With an empty
     * {@code segmentName}, {@code host:port} is a segment's own port (a Mooncake session): the descriptor names the
     * segment, and data goes to its daemon's RPC port on the same host, shared with that daemon's other segments.
     */
    @Override
    public void openAsync(final String peerAddress, final String segmentName, final Consumer<Object> onResult)
    {
        resolver.execute(() ->
        {
            try
            {
                final SegmentDescriptor descriptor = fetchDescriptor(peerAddress, segmentName);
                final PeerLink link = links.computeIfAbsent(rpcAddressOf(peerAddress, descriptor),
                    address -> new PeerLink(address, context.connectionsPerPeer(), this, localNics, descriptor.nics()));
                onResult.accept(remoteSegments.add(new RemoteSegment(
                    segmentName.isEmpty() ? peerAddress : peerAddress + "/" + segmentName, link,
                    descriptor.handle(), descriptor.epoch(), descriptor)));
            }
            catch (final IOException | RuntimeException ex)
            {
                onResult.accept(ex.getMessage() == null ? ex.toString() : ex.getMessage());
            }
        });
    }

    /**
     * @return the daemon's RPC port on the host as the requester named it (the host a descriptor gives may not be
     * reachable by that name from here; the port is the daemon's own).
     */
    static String rpcAddressOf(final String peerAddress, final SegmentDescriptor descriptor)
    {
        final String rpcAddress = descriptor.rpcAddress();
        final int colon = rpcAddress == null ? -1 : rpcAddress.lastIndexOf(':');
        if (colon < 0)
        {
            throw new IllegalArgumentException("descriptor from " + peerAddress + " has no rpc_address");
        }
        final int port;
        try
        {
            port = Integer.parseInt(rpcAddress.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("descriptor from " + peerAddress + " has a bad rpc_address " +
                rpcAddress);
        }
        if (port < 1 || port > 65535)
        {
            throw new IllegalArgumentException("descriptor from " + peerAddress + " has a bad rpc_address " +
                rpcAddress);
        }
        return peerAddress.substring(0, peerAddress.lastIndexOf(':')) + ":" + port;
    }

    private SegmentDescriptor fetchDescriptor(final String peerAddress, final String segmentName) throws IOException
    {
        final InetSocketAddress address = PeerRpcClient.socketAddress(peerAddress);
        try (SocketChannel channel = SocketChannel.open())
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            // a control exchange, tuned all the same: every connection between two daemons runs one algorithm
            socketTuning.apply(channel, address.getHostString());
            fetchesStartedNanos.put(channel, clock.nanoTime());
            try
            {
                channel.socket().connect(address, (int)context.transferTimeoutMs());
                final PeerSession session = PeerHandshake.asInitiator(channel, authenticator);
                FrameIo.sendFrame(channel, session.out(), PeerProtocol.GET_SEGMENT,
                    segmentName.getBytes(StandardCharsets.UTF_8));
                final ByteBuffer answer = FrameIo.receiveFrame(channel, session.in(), PeerProtocol.DESCRIPTOR);
                final int status = answer.getInt();
                final String text = FrameIo.utf8(answer);
                if (status != TransferStatus.OK)
                {
                    throw new PeerRefusedException(text);
                }
                return SegmentDescriptor.fromJson(text).requireSegment(segmentName);
            }
            catch (final IOException ex)
            {
                if (!channel.isOpen())
                {
                    throw new IOException("peer " + peerAddress + " did not answer within " +
                        context.transferTimeoutMs() + " ms");
                }
                throw new IOException("peer " + peerAddress + ": " + ex.getMessage(), ex);
            }
            finally
            {
                fetchesStartedNanos.remove(channel);
            }
        }
    }

    /**
     * Fail the connections whose oldest slice waited past the transfer timeout on the clock, and close the
     * descriptor fetches that did (their blocked reads wake with an error). The watchdog thread calls it
     * periodically; tests call it after moving the clock.
     */
    void checkTimeouts()
    {
        final long now = clock.nanoTime();
        final long timeoutNanos = context.transferTimeoutMs() * 1_000_000L;
        fetchesStartedNanos.forEach((channel, startedNanos) ->
        {
            if (now - startedNanos > timeoutNanos)
            {
                closeQuietly(channel);
            }
        });
        for (final PeerLink link : links.values())
        {
            for (final PeerPath path : link.paths())
            {
                for (final PeerConnection connection : path.connections())
                {
                    connection.checkTimeout(now);
                }
            }
        }
    }

    /**
     * @return how many descriptor fetches are under way (for tests).
     */
    int fetchesUnderWay()
    {
        return fetchesStartedNanos.size();
    }

    long sliceSize()
    {
        return sliceSize;
    }

    NanoClock clock()
    {
        return clock;
    }

    void bytesSent(final long bytes)
    {
        counters.get(SystemCounter.REMOTE_BYTES_SENT).getAndAdd(bytes);
    }

    void bytesReceived(final long bytes)
    {
        counters.get(SystemCounter.REMOTE_BYTES_RECEIVED).getAndAdd(bytes);
    }

    void sliceTimedOut()
    {
        counters.get(SystemCounter.SLICES_TIMED_OUT).increment();
    }

    /**
     * Staging through pinned host memory.
     */
    @Override
    public boolean carriesDeviceMemory()
    {
        return true;
    }

    /**
     * Staging through plain host memory with process_vm_readv/writev.
     */
    @Override
    public boolean carriesProcessMemory()
    {
        return true;
    }

    /**
     * Each merged request is answered at the end of its transfer.
     */
    @Override
    public boolean carriesCoalescedRequests()
    {
        return true;
    }

    StagingBuffer newStagingBuffer()
    {
        return StagingBuffer.create(context, counters);
    }

    /**
     * @return the socket options of this daemon's outgoing peer connections.
     */
    SocketTuning socketTuning()
    {
        return socketTuning;
    }

    PeerAuthenticator authenticator()
    {
        return authenticator;
    }

    SystemCounters counters()
    {
        return counters;
    }

    long spinAfterWorkNanos()
    {
        return context.spinAfterWorkNanos();
    }

    long timeoutMs()
    {
        return context.transferTimeoutMs();
    }

    /**
     * @return the per-peer links with their paths' counters.
     */
    public Map<String, PeerLink> links()
    {
        return links;
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

    @Override
    public void close()
    {
        running = false;
        for (final PeerLink link : links.values())
        {
            link.close();
        }
        resolver.shutdownNow();
        watchdog.shutdownNow();
        LOG.debug("tcp transport closed");
    }
}
