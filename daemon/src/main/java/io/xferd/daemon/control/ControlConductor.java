package io.xferd.daemon.control;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.files.FileModes;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.metadata.ClusterMetadata;
import io.xferd.daemon.session.AccessPolicy;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.ControlChannel;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.daemon.session.SegmentPorts;
import io.xferd.daemon.session.SessionAddress;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.session.SubmitRing;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.FileRegistration;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.ipc.MalformedFrameException;
import io.xferd.ipc.ProcessMemoryRegistration;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.EventFd;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.PeerCredentials;
import io.xferd.nativebindings.libc.Poller;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The daemon's control agent: accepts clients on the Unix socket, answers their control frames (hello,
 * register and unregister memory, open segment), notices at once when a client's socket closes, and frees
 * what the client held once no transfer borrows it any more. Each client gets its own rings file (completion ring,
 * then submit ring); a client the data plane finds breaking the ring protocol is cut off here, with a WARN naming
 * it. Also the daemon's housekeeper: the heartbeat in the cnc file. Runs on its own thread, parked in poll(2)
 * between events, so it always gets CPU on a small host without spinning.
 */
public final class ControlConductor implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ControlConductor.class);
    private static final int POLL_TIMEOUT_MS = 5;
    /**
     * After about a second of duty cycles without work, and with no region waiting to be freed, poll(2) waits up to
     * a quarter of the liveness timeout, at most this long: a socket event or a task queued by another thread (the
     * task bell) still wakes it at once; what waits is the heartbeat, a cut-off queued by the data plane and the
     * check for exited processes. An idle daemon's conductor wakes 4 times a second instead of 50.
     */
    static final int MAX_QUIET_POLL_TIMEOUT_MS = 250;
    static final int QUIET_CYCLES = 200;
    /** Longest segment name a HELLO may carry, in UTF-8 bytes. */
    static final int MAX_SEGMENT_NAME_LENGTH = 255;
    /** Longest message an ERROR answer carries; longer texts are cut (a frame's string has a limit). */
    private static final int MAX_ERROR_MESSAGE_LENGTH = 512;

    private final DaemonContext context;
    private final AccessPolicy access;
    private final SessionTable registry;
    private final UnsafeBuffer cnc;
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects;
    private final SystemCounters counters;
    private final EpochClock clock;
    private final UnixSocket listener;
    private final Poller poller;
    private final List<ClientSession> sessions = new ArrayList<>();
    private final List<ClientSession> closingSessions = new ArrayList<>();
    private final List<Region> closingRegions = new ArrayList<>();
    private final List<PendingUnregister> pendingUnregisters = new ArrayList<>();
    private final List<ControlChannel> greeting = new ArrayList<>();
    private final ManyToOneConcurrentArrayQueue<Runnable> controlTasks;
    // rung after every task queued from another thread: part of every poll, so a task never waits out a quiet one
    private final EventFd taskBell = EventFd.open();
    // threads inside ringBell: the eventfd is closed only once none can still write to its number
    private final AtomicInteger ringing = new AtomicInteger();
    private volatile boolean bellClosed;
    private int quietPollTimeoutMs;
    private final PeerTransport transport;
    private final ClusterMetadata metadata;
    private final GpuRegionMapper gpuRegions;
    private final ProcessRegionMapper processRegions = new ProcessRegionMapper();
    private final FileRegionMapper fileRegions;
    private final ProcessWatch processWatch;
    private volatile boolean accepting = true;
    private ClientSession promoted;
    private long refusedConnections;
    private int quietCycles;
    private volatile ConductorListener operations = ConductorListener.NONE;
    private SegmentPorts segmentPorts = SegmentPorts.NONE;

    private record PendingUnregister(ClientSession session, long correlationId, Region region)
    {
    }

    public ControlConductor(
        final DaemonContext context,
        final RuntimeDirectory directory,
        final SessionTable registry,
        final UnsafeBuffer cnc,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final SystemCounters counters,
        final EpochClock clock,
        final PeerTransport transport,
        final ClusterMetadata metadata)
    {
        this(context, directory, registry, cnc, disconnects, counters, clock, transport, metadata,
            (int)Math.max(POLL_TIMEOUT_MS, Math.min(MAX_QUIET_POLL_TIMEOUT_MS, context.livenessTimeoutMs() / 4)));
    }

    /**
     * Caps the quiet poll, so that housekeeping runs at least every {@code ms} (the systemd watchdog's ping is sent
     * from it: half its interval leaves the other half for the ping to arrive). Before the conductor starts.
     */
    public void quietPollAtMost(final long ms)
    {
        if (ms > 0)
        {
            quietPollTimeoutMs = (int)Math.max(POLL_TIMEOUT_MS, Math.min(quietPollTimeoutMs, ms));
        }
    }

    /**
     * @param quietPollTimeoutMs the longest poll once quiet (tests: long, so that only an event or the bell ends it).
     */
    ControlConductor(
        final DaemonContext context,
        final RuntimeDirectory directory,
        final SessionTable registry,
        final UnsafeBuffer cnc,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final SystemCounters counters,
        final EpochClock clock,
        final PeerTransport transport,
        final ClusterMetadata metadata,
        final int quietPollTimeoutMs)
    {
        this.quietPollTimeoutMs = quietPollTimeoutMs;
        this.transport = transport;
        this.metadata = metadata;
        this.gpuRegions = new GpuRegionMapper(context.deviceMemory());
        this.processWatch = new ProcessWatch(context.maxClients());
        this.context = context;
        this.access = context.accessPolicy();
        this.registry = registry;
        this.cnc = cnc;
        // room for every answer that may be pending at once: each client's are capped
        this.controlTasks = new ManyToOneConcurrentArrayQueue<>(
            context.maxClients() * context.maxPendingControlPerClient() + 1024);
        this.disconnects = disconnects;
        this.counters = counters;
        this.fileRegions = new FileRegionMapper(counters);
        this.clock = clock;
        this.listener = UnixSocket.listen(directory.socketPath(), 128);
        // the directory (0750) already keeps others out while the socket has the umask's mode
        FileModes.set(directory.socketPath(), FileModes.SOCKET);
        this.listener.configureBlocking(false);
        // every fd it can ever watch: the listener, the connections yet to say HELLO (capped), the clients and their
        // processes, the task bell
        this.poller = new Poller(1 + context.maxPendingConnections() + 2 * context.maxClients() + 8);
        CncFileDescriptor.heartbeatMs(cnc, clock.time());
    }

    /**
     * One duty cycle: wait up to a few ms for socket events, serve them, then housekeeping.
     *
     * @return work done.
     */
    public int doWork()
    {
        int work = 0;
        poller.clear();
        final int listenerIndex = accepting ? poller.add(listener.fd()) : -1;
        final int greetingBase = poller.size();
        // indexed loops: this runs ~200 times a second even when idle, so no iterators
        for (int i = 0, size = greeting.size(); i < size; i++)
        {
            poller.add(greeting.get(i).socket().fd());
        }
        final int sessionBase = poller.size();
        for (int i = 0, size = sessions.size(); i < size; i++)
        {
            poller.add(sessions.get(i).socket().fd());
        }
        final int bellIndex = poller.add(taskBell.fd());
        for (int i = 0, size = processWatch.size(); i < size; i++)
        {
            poller.add(processWatch.fd(i)); // housekeeping sees which exited: here they only end the wait
        }

        // not while anything waits for a poll of its own (regions to free, sessions closing, a stop draining)
        final boolean quiet = quietCycles >= QUIET_CYCLES && accepting && pendingUnregisters.isEmpty() &&
            closingRegions.isEmpty() && closingSessions.isEmpty();
        if (poller.poll(quiet ? quietPollTimeoutMs : POLL_TIMEOUT_MS) > 0)
        {
            if (poller.isReadable(bellIndex))
            {
                taskBell.drain(); // before housekeeping polls the queue: a task queued after this rings again
            }
            for (int i = sessions.size() - 1; i >= 0; i--)
            {
                final int index = sessionBase + i;
                if (poller.isReadable(index) || poller.isHangup(index))
                {
                    work += serve(sessions.get(i));
                }
            }
            for (int i = greeting.size() - 1; i >= 0; i--)
            {
                final int index = greetingBase + i;
                if (poller.isReadable(index) || poller.isHangup(index))
                {
                    work += greet(greeting.get(i));
                }
            }
            if (listenerIndex >= 0 && poller.isReadable(listenerIndex))
            {
                work += acceptAll();
            }
        }
        work += housekeeping();
        quietCycles = work > 0 ? 0 : Math.min(quietCycles + 1, QUIET_CYCLES);
        return work;
    }

    private int acceptAll()
    {
        int accepted = 0;
        UnixSocket socket;
        while ((socket = listener.accept()) != null)
        {
            accepted++;
            if (greeting.size() >= context.maxPendingConnections())
            {
                // a flood of silent connections: the one that waited longest goes, so a client that connects and
                // says HELLO at once still gets in
                greeting.remove(0).close();
                if (refusedConnections++ % 1000 == 0)
                {
                    LOG.warn("closing connections that did not say HELLO: {} wait at once ({} closed so far)",
                        greeting.size() + 1, refusedConnections);
                }
            }
            socket.configureBlocking(false);
            greeting.add(new ControlChannel(socket, clock.time()));
        }
        return accepted;
    }

    /**
     * Close the connections that did not say HELLO within the deadline.
     */
    private int expireGreetings(final long nowMs)
    {
        int work = 0;
        for (int i = greeting.size() - 1; i >= 0; i--)
        {
            final ControlChannel channel = greeting.get(i);
            if (nowMs - channel.openedAtMs() > context.helloTimeoutMs())
            {
                greeting.remove(i);
                channel.close();
                work++;
            }
        }
        return work;
    }

    private int greet(final ControlChannel channel)
    {
        promoted = null;
        try
        {
            final boolean open = channel.poll((ch, frame) ->
            {
                if (promoted != null)
                {
                    onFrame(promoted, frame);
                }
                else
                {
                    onHello(ch, frame);
                }
            });
            if (!open)
            {
                closeGreeting(channel);
            }
        }
        catch (final MalformedFrameException | NativeException ex)
        {
            LOG.warn("dropping a connection that sent a bad message: {}", ex.getMessage());
            closeGreeting(channel);
        }
        return 1;
    }

    private void closeGreeting(final ControlChannel channel)
    {
        greeting.remove(channel);
        if (promoted != null)
        {
            disconnect(promoted, "its socket closed");
        }
        else
        {
            channel.close();
        }
    }

    private void onHello(final ControlChannel channel, final ControlFrame frame)
    {
        greeting.remove(channel);
        try
        {
            welcome(channel, frame);
        }
        catch (final MalformedFrameException ex)
        {
            // the frame arrived whole, only its fields are wrong: an answer, not a silent drop
            refuse(channel, 0, ControlError.MALFORMED_MESSAGE, "malformed HELLO: " + ex.getMessage());
        }
    }

    private void welcome(final ControlChannel channel, final ControlFrame frame)
    {
        if (frame.type() != ControlMessages.HELLO)
        {
            refuse(channel, 0, ControlError.MALFORMED_MESSAGE, "first message must be HELLO, got " + frame.type());
            return;
        }
        // the version first: the rest of the HELLO's layout depends on it
        final int version = frame.getInt(ControlMessages.HELLO_VERSION);
        if (version != ControlMessages.PROTOCOL_VERSION)
        {
            refuse(channel, 0, ControlError.PROTOCOL_VERSION_MISMATCH, "this daemon speaks xferd protocol version " +
                ControlMessages.PROTOCOL_VERSION + ", the client speaks version " + version +
                ": upgrade the client library");
            return;
        }
        final int flags = frame.getInt(ControlMessages.HELLO_FLAGS);
        final String name = frame.getString(ControlMessages.HELLO_NAME);
        final int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (name.isEmpty() || name.indexOf('/') >= 0 || nameBytes > MAX_SEGMENT_NAME_LENGTH)
        {
            refuse(channel, 0, ControlError.INVALID_ARGUMENT, "segment name must be 1.." + MAX_SEGMENT_NAME_LENGTH +
                " UTF-8 bytes without '/', got " + nameBytes + " bytes: " + name);
            return;
        }
        if ((flags & ~ControlMessages.HELLO_KNOWN_FLAGS) != 0)
        {
            refuse(channel, 0, ControlError.INVALID_ARGUMENT, "unknown HELLO flags 0x" + Integer.toHexString(flags));
            return;
        }
        if (registry.byName(name) != null)
        {
            refuse(channel, 0, ControlError.DUPLICATE_SEGMENT_NAME, "segment name in use: " + name);
            return;
        }
        final int slot = registry.freeSlot();
        if (slot < 0)
        {
            refuse(channel, 0, ControlError.TOO_MANY_CLIENTS, "daemon full: " + context.maxClients() + " clients");
            return;
        }

        final PeerCredentials peer = channel.socket().peerCredentials();
        final int completionLength = RingsFileDescriptor.ringLength(context.completionRingCapacity());
        final int submitLength = RingsFileDescriptor.ringLength(context.submitRingCapacity());
        final int ringsLength = (int)RingsFileDescriptor.fileLength(completionLength, submitLength);
        final int ringsFd = Memfd.createSealable("xferd-rings-" + slot);
        final MemorySegment ringsMapping;
        try
        {
            Memfd.truncate(ringsFd, ringsLength);
            // the client gets this fd: shrinking it would fault intake's reads of the submit ring (SIGBUS)
            Memfd.addSeals(ringsFd, Memfd.SEAL_SHRINK | Memfd.SEAL_GROW | Memfd.SEAL_SEAL);
            ringsMapping = MappedMemory.mapShared(ringsFd, 0, ringsLength);
        }
        catch (final RuntimeException ex)
        {
            Memfd.close(ringsFd);
            refuse(channel, 0, ControlError.MAP_FAILED, "cannot create the rings file: " + ex.getMessage());
            return;
        }
        final UnsafeBuffer rings = new UnsafeBuffer(ringsMapping.address(), ringsLength);
        final String fullName = context.rpcAddress() + "/" + name;
        final ClientSession session = new ClientSession(slot, registry.nextGeneration(slot), name, fullName,
            peer.pid(), peer.uid(), peer.gid(), channel.socket(), channel, ringsMapping,
            new ManyToOneRingBuffer(RingsFileDescriptor.completionRing(rings, completionLength)),
            new SubmitRing(RingsFileDescriptor.submitRing(rings, completionLength, submitLength)));
        int segmentPort = 0;
        if ((flags & ControlMessages.HELLO_FLAG_LISTEN) != 0)
        {
            try
            {
                segmentPort = segmentPorts.open(session);
            }
            catch (final RegistrationRefusedException ex)
            {
                Memfd.close(ringsFd);
                MappedMemory.unmap(ringsMapping);
                refuse(channel, 0, ex.code(), "cannot give segment " + name + " its own RPC port: " + ex.getMessage());
                return;
            }
        }

        channel.beginAnswer(ControlMessages.WELCOME)
            .putInt(ControlMessages.WELCOME_CLIENT_SLOT, slot)
            .putInt(ControlMessages.WELCOME_MAX_IN_FLIGHT, context.maxInFlightPerClient())
            .putLong(ControlMessages.WELCOME_RESERVED, 0L)
            .putLong(ControlMessages.WELCOME_SEGMENT_HANDLE, session.segmentHandle())
            .putInt(ControlMessages.WELCOME_COMPLETION_RING_LENGTH, completionLength)
            .putInt(ControlMessages.WELCOME_MAX_NOTIFY_LENGTH, SubmitRequestFlyweight.MAX_NOTIFY_LENGTH)
            .putLong(ControlMessages.WELCOME_MAX_REQUEST_LENGTH, context.maxRequestLength())
            .putInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH, submitLength)
            .putInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES, context.maxBatchEntriesInForce())
            .putInt(ControlMessages.WELCOME_SEGMENT_RPC_PORT, segmentPort)
            .putInt(ControlMessages.WELCOME_TRANSPORT, transportCode(context.transportInUse()))
            .putString(ControlMessages.WELCOME_SEGMENT_NAME, fullName);
        // registered before the WELCOME goes out: the client may submit the moment it has its rings
        registry.add(session);
        final boolean sent = channel.send(ringsFd);
        Memfd.close(ringsFd);
        if (!sent)
        {
            registry.remove(session);
            session.markClosed();
            if (segmentPort != 0)
            {
                segmentPorts.close(session);
            }
            // intake may be reading its ring already: unmapped once it lets go
            closingSessions.add(session);
            channel.requestClose();
            return;
        }
        sessions.add(session);
        promoted = session;
        counters.get(SystemCounter.CLIENTS_CONNECTED).increment();
        segmentChanged(session);
        LOG.info("client connected: segment {} pid {} uid {} slot {}{}", name, peer.pid(), peer.uid(), slot,
            segmentPort != 0 ? " rpc port " + segmentPort : "");
        operations.onClientConnected(session);
    }

    /**
     * The transport a client is told it gets (WELCOME offset 52), so that a Mooncake engine asking for "rdma" or "tcp"
     * can refuse a daemon serving the other one instead of falling back silently.
     */
    static int transportCode(final String transportInUse)
    {
        if (transportInUse == null || transportInUse.startsWith("tcp"))
        {
            return transportInUse != null && transportInUse.contains("protocol_fallback") ?
                ControlMessages.TRANSPORT_TCP | ControlMessages.TRANSPORT_FALLBACK : ControlMessages.TRANSPORT_TCP;
        }
        return transportInUse.startsWith("rdma") ? ControlMessages.TRANSPORT_RDMA : ControlMessages.TRANSPORT_TCP;
    }

    private int serve(final ClientSession session)
    {
        try
        {
            if (!session.channel().poll((ch, frame) -> onFrame(session, frame)))
            {
                disconnect(session, "its socket closed");
            }
        }
        catch (final MalformedFrameException | NativeException ex)
        {
            disconnect(session, "bad control message: " + ex.getMessage());
        }
        return 1;
    }

    private void onFrame(final ClientSession session, final ControlFrame frame)
    {
        final long correlationId = frame.getLong(ControlMessages.CORRELATION_ID);
        switch (frame.type())
        {
            case ControlMessages.REGISTER_MEMORY -> onRegister(session, frame, correlationId);
            case ControlMessages.UNREGISTER_MEMORY -> onUnregister(session, frame, correlationId);
            case ControlMessages.OPEN_SEGMENT -> onOpenSegment(session, frame, correlationId);
            case ControlMessages.REGISTER_GPU_MEMORY -> onRegisterGpu(session, frame, correlationId);
            case ControlMessages.REGISTER_PROCESS_MEMORY -> onRegisterProcess(session, frame, correlationId);
            case ControlMessages.FIRST_BUFFER -> onFirstBuffer(session, frame, correlationId);
            case ControlMessages.REGISTER_FILE -> onRegisterFile(session, frame, correlationId);
            default -> throw new MalformedFrameException("unknown control message type " + frame.type());
        }
    }

    private void onRegister(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final ControlChannel channel = session.channel();
        final int fd = channel.takeFd();
        final long address = frame.getLong(ControlMessages.REGISTER_ADDRESS);
        final long length = frame.getLong(ControlMessages.REGISTER_LENGTH);
        final long fdOffset = frame.getLong(ControlMessages.REGISTER_FD_OFFSET);
        final String location = frame.getString(ControlMessages.REGISTER_LOCATION);
        if (fd < 0)
        {
            answerError(session, correlationId, ControlError.MISSING_FD,
                "REGISTER_MEMORY needs the memfd that backs the range (SCM_RIGHTS)");
            return;
        }
        if (address <= 0 || length <= 0 || fdOffset < 0 || address + length < address)
        {
            Memfd.close(fd);
            answerError(session, correlationId, ControlError.INVALID_ARGUMENT,
                "bad range: address 0x" + Long.toHexString(address) + " length " + length + " offset " + fdOffset);
            return;
        }
        if (overRegionLimit(session, correlationId))
        {
            Memfd.close(fd);
            return;
        }
        if (session.regions().overlaps(address, length))
        {
            Memfd.close(fd);
            answerError(session, correlationId, ControlError.OVERLAPPING_REGION,
                "range 0x" + Long.toHexString(address) + "+" + length + " overlaps a registered region");
            return;
        }
        final Region region;
        try
        {
            region = RegionMapper.map(fd, fdOffset, address, length, location);
        }
        catch (final RegistrationRefusedException ex)
        {
            answerError(session, correlationId, ex.code(), ex.getMessage());
            return;
        }
        catch (final NativeException ex)
        {
            answerError(session, correlationId, ControlError.MAP_FAILED, "mmap failed: " + ex.getMessage());
            return;
        }
        addRegion(session, correlationId, region, length);
    }

    /**
     * @return true (and the client has its ERROR) when it has as many regions as a client may have.
     */
    private boolean overRegionLimit(final ClientSession session, final long correlationId)
    {
        if (session.regions().size() < context.maxRegionsPerClient())
        {
            return false;
        }
        answerError(session, correlationId, ControlError.LIMIT_REACHED, "segment " + session.segmentName() +
            " has " + session.regions().size() + " regions registered, the most a client may have");
        return true;
    }

    /**
     * @return true (and the client has its ERROR) when the conductor already holds as many of its control requests
     * unanswered as it may; else counts one more.
     */
    private boolean overPendingLimit(final ClientSession session, final long correlationId)
    {
        if (session.pendingControl() >= context.maxPendingControlPerClient())
        {
            answerError(session, correlationId, ControlError.LIMIT_REACHED, "segment " + session.segmentName() +
                " has " + session.pendingControl() + " control requests waiting for an answer, the most a client may");
            return true;
        }
        session.pendingControl(1);
        return false;
    }

    /**
     * GPU memory through a CUDA IPC handle. Every refusal is an answer, and a frame of the wrong length too (its
     * framing is intact, so the connection is): a daemon without CUDA keeps serving the client's host memory.
     */
    private void onRegisterGpu(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final GpuMemoryRegistration registration;
        try
        {
            registration = GpuMemoryRegistration.decode(frame);
        }
        catch (final MalformedFrameException ex)
        {
            answerError(session, correlationId, ControlError.MALFORMED_MESSAGE, ex.getMessage());
            return;
        }
        final long address = registration.devicePointer();
        final long length = registration.length();
        final long offset = registration.allocationOffset();
        if (address <= 0 || length <= 0 || offset < 0 || address + length < address || offset + length < offset)
        {
            answerError(session, correlationId, ControlError.INVALID_ARGUMENT, "bad range: device pointer 0x" +
                Long.toHexString(address) + " length " + length + " offset in allocation " + offset);
            return;
        }
        if (GpuMemoryRegistration.cudaOrdinal(registration.location()) < 0)
        {
            answerError(session, correlationId, ControlError.INVALID_ARGUMENT,
                "GPU memory needs a location cuda:N, not " + registration.location());
            return;
        }
        if (overRegionLimit(session, correlationId))
        {
            return;
        }
        if (session.regions().overlaps(address, length))
        {
            answerError(session, correlationId, ControlError.OVERLAPPING_REGION,
                "range 0x" + Long.toHexString(address) + "+" + length + " overlaps a registered region");
            return;
        }
        final Region region;
        try
        {
            region = gpuRegions.map(registration);
        }
        catch (final RegistrationRefusedException ex)
        {
            answerError(session, correlationId, ex.code(), ex.getMessage());
            return;
        }
        LOG.info("segment {} registered GPU memory {}", session.segmentName(), region);
        addRegion(session, correlationId, region, length);
    }

    /**
     * Ordinary memory of the client process (REGISTER_PROCESS_MEMORY), reached with process_vm_readv/writev on the
     * pid its socket's credentials name. Every refusal is an answer, and a frame of the wrong length too (its framing
     * is intact, so the connection is).
     */
    private void onRegisterProcess(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final ProcessMemoryRegistration registration;
        try
        {
            registration = ProcessMemoryRegistration.decode(frame);
        }
        catch (final MalformedFrameException ex)
        {
            answerError(session, correlationId, ControlError.MALFORMED_MESSAGE, ex.getMessage());
            return;
        }
        registerProcessMemory(session, correlationId, registration.ownerAddress(), registration.length(),
            registration.location());
    }

    private void registerProcessMemory(
        final ClientSession session, final long correlationId, final long address, final long length,
        final String location)
    {
        if (overRegionLimit(session, correlationId))
        {
            return;
        }
        if (address > 0 && length > 0 && address + length > address && session.regions().overlaps(address, length))
        {
            answerError(session, correlationId, ControlError.OVERLAPPING_REGION,
                "range 0x" + Long.toHexString(address) + "+" + length + " overlaps a registered region");
            return;
        }
        final Region region;
        try
        {
            region = processRegions.map(session.pid(), address, length, location);
        }
        catch (final RegistrationRefusedException ex)
        {
            answerError(session, correlationId, ex.code(), ex.getMessage());
            return;
        }
        if (!processWatch.watch(session))
        {
            answerError(session, correlationId, ControlError.MAP_FAILED, "process " + session.pid() + " is gone");
            return;
        }
        addRegion(session, correlationId, region, length);
    }

    /**
     * A byte range of a file or block device the client passes open (REGISTER_FILE). Every refusal is an answer, and
     * a frame of the wrong length too; the passed descriptor is closed on every refusal.
     */
    private void onRegisterFile(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final int fd = session.channel().takeFd();
        final FileRegistration registration;
        try
        {
            registration = FileRegistration.decode(frame);
        }
        catch (final MalformedFrameException ex)
        {
            closeFd(fd);
            answerError(session, correlationId, ControlError.MALFORMED_MESSAGE, ex.getMessage());
            return;
        }
        if (fd < 0)
        {
            answerError(session, correlationId, ControlError.MISSING_FD,
                "REGISTER_FILE needs the open file or block device (SCM_RIGHTS)");
            return;
        }
        final long address = registration.ownerAddress();
        final long length = registration.length();
        if ((registration.flags() & ~ControlMessages.REGISTER_FILE_KNOWN_FLAGS) != 0)
        {
            closeFd(fd);
            answerError(session, correlationId, ControlError.INVALID_ARGUMENT,
                "unknown REGISTER_FILE flags 0x" + Integer.toHexString(registration.flags()));
            return;
        }
        if (overRegionLimit(session, correlationId))
        {
            closeFd(fd);
            return;
        }
        if (address > 0 && length > 0 && address + length > address && session.regions().overlaps(address, length))
        {
            closeFd(fd);
            answerError(session, correlationId, ControlError.OVERLAPPING_REGION,
                "range 0x" + Long.toHexString(address) + "+" + length + " overlaps a registered region");
            return;
        }
        final Region region;
        try
        {
            region = fileRegions.map(fd, registration, session.segmentName());
        }
        catch (final RegistrationRefusedException ex)
        {
            answerError(session, correlationId, ex.code(), ex.getMessage());
            return;
        }
        LOG.info("segment {} registered storage {}", session.segmentName(), region);
        addRegion(session, correlationId, region, length);
    }

    /** A region mapped for a registration joins its session's table; counted, recorded, answered, republished. */
    private void addRegion(
        final ClientSession session, final long correlationId, final Region region, final long length)
    {
        session.regions(session.regions().with(region));
        counters.get(SystemCounter.REGISTERED_BYTES).getAndAdd(length);
        counters.get(SystemCounter.REGIONS_REGISTERED).increment();
        operations.onRegionAdded(session, region);
        answerOk(session, correlationId, 0);
        segmentChanged(session);
    }

    private static void closeFd(final int fd)
    {
        if (fd >= 0)
        {
            Memfd.close(fd);
        }
    }

    private void onUnregister(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final long address = frame.getLong(ControlMessages.UNREGISTER_ADDRESS);
        final Region region = session.regions().startingAt(address);
        if (region == null)
        {
            answerError(session, correlationId, ControlError.NOT_REGISTERED,
                "no region starts at 0x" + Long.toHexString(address));
            return;
        }
        if (overPendingLimit(session, correlationId))
        {
            return;
        }
        session.regions(session.regions().without(region));
        region.markClosed();
        operations.onRegionRemoved(session, region);
        // answered once no transfer copies through it any more, so the client may reuse the memory at once
        pendingUnregisters.add(new PendingUnregister(session, correlationId, region));
    }

    private void onOpenSegment(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final String name = frame.getString(ControlMessages.OPEN_SEGMENT_NAME);
        final SessionAddress sessionAddress = SessionAddress.parse(name);
        if (sessionAddress != null)
        {
            openSession(session, correlationId, sessionAddress);
            return;
        }
        final String localPrefix = context.rpcAddress() + "/";
        final int slash = name.indexOf('/');
        if (slash > 0 && !name.startsWith(localPrefix))
        {
            openRemoteSegment(session, correlationId, name.substring(0, slash), name.substring(slash + 1));
            return;
        }
        final String local = name.startsWith(localPrefix) ? name.substring(localPrefix.length()) : name;
        final ClientSession target = registry.byName(local);
        if (target == null && slash < 0 && metadata != null)
        {
            // a plain name not served here: another daemon's, found through the metadata store
            openRemote(session, correlationId, name, onResult -> metadata.openAsync(name, onResult));
            return;
        }
        if (target == null)
        {
            answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT, "no segment named " + name);
            return;
        }
        answerLocalSegment(session, correlationId, target);
    }

    /**
     * Mooncake's {@code get_first_buffer_address}: the owner address of the first buffer the segment's descriptor
     * lists (its lowest-addressed range), 0 when it has none. A segment of this daemon answers from its current
     * regions; another daemon's from the descriptor fetched when it was opened (OPEN_SEGMENT again for a fresh one).
     */
    private void onFirstBuffer(final ClientSession session, final ControlFrame frame, final long correlationId)
    {
        final long handle = frame.getLong(ControlMessages.FIRST_BUFFER_SEGMENT);
        if (RemoteSegments.isRemote(handle))
        {
            final RemoteSegment remote =
                transport == null ? null : transport.remoteSegments().get(handle);
            if (remote == null)
            {
                answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT, "no segment has handle " + handle);
                return;
            }
            final List<SegmentDescriptor.Buffer> buffers =
                remote.descriptor() == null ? null : remote.descriptor().buffers();
            answerOk(session, correlationId, buffers == null || buffers.isEmpty() ? 0 : buffers.get(0).address());
            return;
        }
        final ClientSession target = registry.segment(handle);
        if (target == null || target.isClosed())
        {
            answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT, "no segment has handle " + handle);
            return;
        }
        if (!access.permits(session, target))
        {
            answerError(session, correlationId, ControlError.ACCESS_DENIED,
                "segment " + target.segmentName() + " is not granted to uid " + session.uid());
            return;
        }
        final RegionTable regions = target.regions();
        answerOk(session, correlationId, regions.size() == 0 ? 0 : regions.get(0).ownerAddress());
    }

    private void answerLocalSegment(final ClientSession session, final long correlationId, final ClientSession target)
    {
        if (!access.permits(session, target))
        {
            LOG.warn("access denied: pid {} uid {} gid {} (segment {}) to segment {} of uid {}", session.pid(),
                session.uid(), session.gid(), session.segmentName(), target.segmentName(), target.uid());
            answerError(session, correlationId, ControlError.ACCESS_DENIED,
                "segment " + target.segmentName() + " belongs to another uid and is not granted to uid " +
                session.uid() + " or gid " + session.gid());
            return;
        }
        answerOk(session, correlationId, target.segmentHandle());
    }

    /**
     * A Mooncake session, {@code host:port} where the port is one segment's own: that segment, found here when the
     * port is one of this daemon's, else through the network (a fresh descriptor fetch on that port, so a segment
     * whose engine restarted on a new port is reached again, and a closed port fails now).
     */
    private void openSession(
        final ClientSession session, final long correlationId, final SessionAddress address)
    {
        final ClientSession local = segmentPorts.localSegment(address);
        if (local != null)
        {
            if (local.isClosed())
            {
                answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT,
                    "the segment of " + address + " is gone");
                return;
            }
            answerLocalSegment(session, correlationId, local);
            return;
        }
        if (transport == null)
        {
            answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT, "no peer transport in this daemon");
            return;
        }
        final String name = address.toString();
        openRemote(session, correlationId, name, onResult -> transport.openAsync(name, "", onResult));
    }

    /**
     * Ask the peer daemon for the descriptor off this thread (a peer may be slow or gone); the answer to the
     * client is sent from this thread when the result comes back.
     */
    private void openRemoteSegment(
        final ClientSession session, final long correlationId, final String peerAddress, final String segmentName)
    {
        if (transport == null)
        {
            answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT, "no peer transport in this daemon");
            return;
        }
        openRemote(session, correlationId, peerAddress + "/" + segmentName,
            onResult -> transport.openAsync(peerAddress, segmentName, onResult));
    }

    private void openRemote(
        final ClientSession session,
        final long correlationId,
        final String name,
        final java.util.function.Consumer<java.util.function.Consumer<Object>> opener)
    {
        if (overPendingLimit(session, correlationId))
        {
            return;
        }
        opener.accept(result -> offerTask(() ->
        {
            session.pendingControl(-1);
            if (session.isClosed())
            {
                return;
            }
            if (result instanceof Long handle)
            {
                answerOk(session, correlationId, handle);
            }
            else
            {
                answerError(session, correlationId, ControlError.UNKNOWN_SEGMENT, "cannot open " + name + ": " + result);
            }
        }));
    }

    /**
     * Hand a task to the conductor thread from any thread; the queue has room for every answer that can be pending.
     */
    private void offerTask(final Runnable task)
    {
        while (!controlTasks.offer(task))
        {
            Thread.onSpinWait();
        }
        wake();
    }

    /**
     * End the conductor's poll now (any thread): a task was queued, or its thread is asked to stop.
     */
    public void wake()
    {
        ringing.getAndIncrement();
        try
        {
            if (!bellClosed)
            {
                taskBell.signal();
            }
        }
        finally
        {
            ringing.getAndDecrement();
        }
    }

    private void segmentChanged(final ClientSession session)
    {
        if (metadata != null && !session.isClosed())
        {
            metadata.segmentChanged(session);
        }
    }

    private void answerOk(final ClientSession session, final long correlationId, final long value)
    {
        session.channel().beginAnswer(ControlMessages.OK)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putLong(ControlMessages.OK_VALUE, value);
        session.channel().send(-1);
    }

    private void answerError(final ClientSession session, final long correlationId, final int code, final String text)
    {
        session.channel().beginAnswer(ControlMessages.ERROR)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putInt(ControlMessages.ERROR_CODE, code)
            .putString(ControlMessages.ERROR_MESSAGE, bounded(text));
        session.channel().send(-1);
    }

    private void refuse(final ControlChannel channel, final long correlationId, final int code, final String text)
    {
        final String message = bounded(text);
        LOG.warn("refusing a client: {}", message);
        channel.beginAnswer(ControlMessages.ERROR)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putInt(ControlMessages.ERROR_CODE, code)
            .putString(ControlMessages.ERROR_MESSAGE, message);
        channel.send(-1);
        channel.requestClose();
    }

    /**
     * @return the text cut to what an ERROR frame carries (a client chooses the names echoed in it).
     */
    static String bounded(final String text)
    {
        return text.length() <= MAX_ERROR_MESSAGE_LENGTH ? text : text.substring(0, MAX_ERROR_MESSAGE_LENGTH) + "...";
    }

    /**
     * Cut a client off: its segment disappears for new requests at once, its socket closes, and its memory is
     * unmapped once the last transfer that borrowed it is done.
     */
    public void disconnect(final ClientSession session, final String reason)
    {
        if (!sessions.remove(session))
        {
            return;
        }
        registry.remove(session);
        session.markClosed();
        processWatch.unwatch(session);
        final var regions = session.regions();
        for (int i = 0; i < regions.size(); i++)
        {
            final Region region = regions.get(i);
            region.markClosed();
            closingRegions.add(region);
        }
        pendingUnregisters.removeIf(p -> p.session == session && closingRegions.add(p.region));
        session.socket().close();
        segmentPorts.close(session);
        closingSessions.add(session);
        counters.get(SystemCounter.CLIENTS_DISCONNECTED).increment();
        if (metadata != null)
        {
            metadata.segmentRemoved(session);
        }
        LOG.info("client disconnected: segment {} pid {} ({})", session.segmentName(), session.pid(), reason);
        operations.onClientDisconnected(session);
    }

    private int housekeeping()
    {
        int work = 0;
        final long now = clock.time();
        CncFileDescriptor.heartbeatMs(cnc, now);

        Runnable task;
        while ((task = controlTasks.poll()) != null)
        {
            task.run();
            work++;
        }

        ClientSession bad;
        while ((bad = disconnects.poll()) != null)
        {
            if (sessions.contains(bad))
            {
                final String violation = bad.protocolViolation();
                final String reason = violation != null ? violation :
                    "it overran its completion ring (more requests in flight than WELCOME allows)";
                LOG.warn("cutting off client segment {} pid {} uid {}: {}", bad.segmentName(), bad.pid(), bad.uid(),
                    reason);
                counters.get(SystemCounter.CLIENTS_CUT_OFF).increment();
                disconnect(bad, reason);
            }
            work++;
        }

        work += expireGreetings(now);
        work += cutOffExitedProcesses();
        work += reclaim();
        operations.onHousekeeping(now);
        return work;
    }

    /**
     * A client whose process exited while its socket lives on (a forked child holds it): its process memory is
     * reached by a pid that may soon name another process, so the session goes now.
     */
    private int cutOffExitedProcesses()
    {
        final List<ClientSession> exited = processWatch.poll();
        for (int i = 0, size = exited.size(); i < size; i++)
        {
            final ClientSession session = exited.get(i);
            LOG.warn("client segment {} pid {}: its process exited while its socket is still open (a forked child " +
                "holds it); cutting it off, as its process memory is reached by that pid", session.segmentName(),
                session.pid());
            disconnect(session, "its process exited");
        }
        return exited.size();
    }

    private int reclaim()
    {
        int work = 0;
        for (int i = pendingUnregisters.size() - 1; i >= 0; i--)
        {
            final PendingUnregister pending = pendingUnregisters.get(i);
            if (pending.region.isReclaimable())
            {
                pendingUnregisters.remove(i);
                pending.session.pendingControl(-1);
                freeRegion(pending.region);
                answerOk(pending.session, pending.correlationId, 0);
                segmentChanged(pending.session);
                work++;
            }
        }
        for (int i = closingRegions.size() - 1; i >= 0; i--)
        {
            final Region region = closingRegions.get(i);
            if (region.isReclaimable())
            {
                closingRegions.remove(i);
                freeRegion(region);
                work++;
            }
        }
        for (int i = closingSessions.size() - 1; i >= 0; i--)
        {
            final ClientSession session = closingSessions.get(i);
            if (session.isReclaimable())
            {
                closingSessions.remove(i);
                MappedMemory.unmap(session.ringsMapping());
                session.channel().close();
                work++;
            }
        }
        return work;
    }

    private void freeRegion(final Region region)
    {
        if (region.isDevice())
        {
            gpuRegions.unmap(region);
        }
        else if (region.isMapped())
        {
            RegionMapper.unmap(region);
        }
        else if (region.isFile())
        {
            FileRegionMapper.unmap(region);
        }
        // process memory: nothing was taken
        counters.get(SystemCounter.REGISTERED_BYTES).getAndAdd(-region.length());
        counters.get(SystemCounter.REGIONS_REGISTERED).decrement();
    }

    /**
     * Set before the conductor thread starts.
     */
    public void operations(final ConductorListener listener)
    {
        this.operations = listener;
    }

    /**
     * Set before the conductor thread starts: who binds the per-segment RPC ports of HELLO's LISTEN flag.
     */
    public void segmentPorts(final SegmentPorts ports)
    {
        this.segmentPorts = ports;
    }

    /**
     * Stop taking new clients (the first step of a shutdown).
     */
    public void stopAccepting()
    {
        accepting = false;
    }

    public int clientCount()
    {
        return sessions.size();
    }

    /**
     * @return true when nothing is left to free (after every client was disconnected).
     */
    public boolean isQuiescent()
    {
        return closingSessions.isEmpty() && closingRegions.isEmpty() && pendingUnregisters.isEmpty();
    }

    /**
     * Disconnect everyone; call {@link #doWork()} until {@link #isQuiescent()} to free their memory.
     */
    public void disconnectAll(final String reason)
    {
        for (final ClientSession session : new ArrayList<>(sessions))
        {
            disconnect(session, reason);
        }
        for (final ControlChannel channel : greeting)
        {
            channel.close();
        }
        greeting.clear();
    }

    @Override
    public void close()
    {
        processWatch.close();
        listener.close();
        bellClosed = true; // a late task (a metadata answer during shutdown) must not write to a reused fd number
        while (ringing.get() != 0)
        {
            Thread.onSpinWait();
        }
        taskBell.close();
    }
}
