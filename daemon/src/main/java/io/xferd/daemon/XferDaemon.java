package io.xferd.daemon;

import io.xferd.daemon.agent.AgentWatch;
import io.xferd.daemon.agent.Doorbell;
import io.xferd.daemon.agent.DozingBackoffIdleStrategy;
import io.xferd.daemon.agent.DutyCycleTracker;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.agent.ThreadingMode;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.control.ConductorListener;
import io.xferd.daemon.control.ConfiguredStorageSegments;
import io.xferd.daemon.control.ControlConductor;
import io.xferd.daemon.control.FileRegionMapper;
import io.xferd.daemon.control.RuntimeDirectory;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.journal.Journal;
import io.xferd.daemon.metadata.ClusterMetadata;
import io.xferd.daemon.metrics.MetricsCollector;
import io.xferd.daemon.metrics.MetricsEndpoint;
import io.xferd.daemon.pipeline.SubmitAdapter;
import io.xferd.daemon.pipeline.TransferPipeline;
import io.xferd.daemon.pipeline.TransferWorker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.session.SubmitRingDoorbells;
import io.xferd.daemon.statusmap.DeferredStatusMap;
import io.xferd.daemon.statusmap.StatusFileWriter;
import io.xferd.daemon.statusmap.StatusMapWriter;
import io.xferd.daemon.storage.StorageStage;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.daemon.transport.TransportSelector;
import io.xferd.daemon.transport.rdma.RdmaDevices;
import io.xferd.daemon.transport.rdma.RdmaMemoryRegistrar;
import io.xferd.daemon.transport.rdma.RdmaNicPreference;
import io.xferd.daemon.transport.rdma.RdmaTransport;
import io.xferd.daemon.transport.tcp.PeerServer;
import io.xferd.daemon.transport.tcp.TcpTransport;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.SystemCounter;
import io.xferd.nativebindings.libc.Process;
import io.xferd.nativebindings.verbs.Verbs;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The per-host daemon, assembled: runtime directory and cnc file, control conductor on its own thread, and the
 * data plane (intake and transfer workers) on one shared thread or dedicated ones. {@link #close()} drains
 * in-flight work, disconnects every client, frees their memory and removes the directory's files.
 */
public final class XferDaemon implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(XferDaemon.class);
    /** How often the conductor looks whether the other daemon threads are alive. */
    static final long AGENT_CHECK_PERIOD_MS = 100;

    private final DaemonContext context;
    private final RuntimeDirectory directory;
    private final SessionTable registry;
    private final SystemCounters counters;
    private final TransferPipeline pipeline;
    private final ControlConductor conductor;
    private final PeerServer peerServer;
    private final PeerTransport transport;
    private final RdmaMemoryRegistrar rdmaRegistrar;
    private final ClusterMetadata metadata;
    private final List<AgentRunner> dataPlaneRunners = new ArrayList<>();
    private final SubmitRingDoorbells doorbells;
    private final StorageStage storageStage;
    private final ConfiguredStorageSegments storageSegments;
    private final AgentRunner storageRunner;
    private final List<DutyCycleTracker> dutyCycles = new ArrayList<>();
    private final Journal journal;
    private final StatusFileWriter statusFile;
    private final DeferredStatusMap registryWriter;
    private final SystemdNotifier notifier;
    private final MetricsEndpoint metrics;
    private final Thread conductorThread;
    private final AgentWatch agents = new AgentWatch(AGENT_CHECK_PERIOD_MS);
    private final CountDownLatch conductorStopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile Throwable failure;
    private volatile Runnable onFailure = () -> { };
    private volatile boolean closed;

    /**
     * @param rdmaDevices the opened RDMA devices when the RDMA transport runs, else null (owned from here on).
     */
    private XferDaemon(final DaemonContext context, final RdmaDevices rdmaDevices)
    {
        this.context = context;
        try
        {
            this.directory = RuntimeDirectory.claim(context.directory(), context.livenessTimeoutMs());
        }
        catch (final RuntimeException ex)
        {
            if (rdmaDevices != null)
            {
                rdmaDevices.close();
            }
            throw ex;
        }
        try
        {
            // before the RPC port opens: a daemon never serves peers it cannot authenticate, unless told to
            io.xferd.daemon.config.ClusterKey.resolve(context);
        }
        catch (final RuntimeException ex)
        {
            if (rdmaDevices != null)
            {
                rdmaDevices.close();
            }
            directory.close();
            throw ex;
        }
        final UnsafeBuffer cnc = directory.createCncFile(
            context.countersCapacity() * org.agrona.concurrent.status.CountersReader.COUNTER_LENGTH,
            Process.pid(), context.livenessTimeoutMs());
        this.counters = new SystemCounters(new CountersManager(
            CncFileDescriptor.countersMetadataBuffer(cnc), CncFileDescriptor.countersValuesBuffer(cnc)));

        // its own thread in every threading mode: it blocks in io_uring_enter while the device works
        this.storageStage = new StorageStage(context.storageQueueDepth(), StorageStage.DEFAULT_SUBMISSIONS,
            counters.get(SystemCounter.STORAGE_BYTES_READ), counters.get(SystemCounter.STORAGE_BYTES_WRITTEN),
            counters.get(SystemCounter.STORAGE_ERRORS), counters.get(SystemCounter.STORAGE_SYNCS));
        // parks of up to 1 ms while operations may be in flight; after ~100 ms without any work, 20 ms dozes (an
        // idle daemon's storage thread cost 3.8% of a core here in 1 ms parks), after ~2 s 200 ms ones (0.3% -> ~0.05%):
        // a submission unparks it at once; only a completion on a second busy device (one busy device is waited
        // for in the kernel) could wait out a doze, and only after 2 s without any
        this.storageRunner = new AgentRunner(
            new DozingBackoffIdleStrategy(100, 10, 1_000, 1_000_000, 100, 20_000_000, 200, 200_000_000),
            throwable -> LOG.error("storage stage error", throwable), null, storageStage);
        final SessionTable registry = new SessionTable(context.maxClients());
        this.registry = registry;
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(1024);
        final LocalNics localNics;
        final long epoch = newEpoch(); // the peer handshake announces it, CONNECT_QP carries it
        try
        {
            // with rdma (or its TCP fallback) device_name lists RDMA devices, not the NICs TCP stripes over
            localNics = context.localNics() != null ? context.localNics() : "tcp".equals(context.protocol()) ?
                LocalNics.resolve(context.deviceNames(), context.topologyMatrixFile()) : LocalNics.resolve(List.of());
            this.peerServer = new PeerServer(context, registry, counters, disconnects, epoch, localNics);
            peerServer.storageStage(storageStage);
        }
        catch (final RuntimeException ex)
        {
            if (rdmaDevices != null)
            {
                rdmaDevices.close();
            }
            directory.close();
            throw ex;
        }
        // segment names carry the address peers really reach (the bound port when 0 was asked for)
        context.rpcAddress(peerServer.advertisedAddress());
        try
        {
            this.storageSegments = ConfiguredStorageSegments.open(context, registry, new FileRegionMapper(counters));
        }
        catch (final RuntimeException ex)
        {
            peerServer.close();
            if (rdmaDevices != null)
            {
                rdmaDevices.close();
            }
            directory.close();
            throw ex;
        }
        if (rdmaDevices != null)
        {
            this.rdmaRegistrar = new RdmaMemoryRegistrar(rdmaDevices);
            final RdmaTransport rdma = new RdmaTransport(context, epoch, counters, disconnects, rdmaRegistrar,
                RdmaNicPreference.of(rdmaDevices.names(), context.topologyMatrixFile()), SystemNanoClock.INSTANCE);
            peerServer.describeWith(rdma.name(), rdmaDevices.names(), rdma::describe);
            peerServer.handle(PeerProtocol.CONNECT_QP, rdma::acceptConnect);
            this.transport = rdma;
        }
        else
        {
            this.rdmaRegistrar = null;
            this.transport = new TcpTransport(context, counters, disconnects, localNics,
                io.xferd.daemon.auth.PeerAuthenticator.of(context, epoch));
            if (!"tcp".equals(context.protocol()))
            {
                peerServer.describeWith("tcp", List.of(),
                    region -> new SegmentDescriptor.Buffer(region.ownerAddress(), region.length(), region.location()));
            }
        }
        this.pipeline = new TransferPipeline(context.pipelineSize(), context.transferWorkers());
        final SystemNanoClock nanoClock = SystemNanoClock.INSTANCE;
        this.journal = Journal.create(context.operations(), counters); // its thread starts once serving
        transport.journal(journal.recorder());

        final List<Agent> workers = new ArrayList<>();
        for (int i = 0; i < context.transferWorkers(); i++)
        {
            workers.add(new TransferWorker(i, pipeline, registry, new CompletionSender(disconnects, counters), transport,
                counters, nanoClock, context.maxRequestLength(), context.dutyCycleByteBudget(), journal.recorder(),
                context.deviceMemory(), context.accessPolicy(), context.storageQueueDepth(), storageStage));
        }
        // SHARED: intake and the workers take turns on one thread, so intake may run a lone local request on the
        // first worker itself, without the pipeline hop
        final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters, nanoClock,
            journal.recorder(), context.maxBatchEntriesInForce(), context.batchTrackersPerClient(),
            transport != null && transport.carriesCoalescedRequests() ?
                Math.min(context.sliceSize(), context.maxRequestLength()) : 0,
            context.threadingMode() == ThreadingMode.SHARED ? (TransferWorker)workers.get(0) : null);
        if (transport instanceof RdmaTransport rdma)
        {
            workers.add(rdma.agent());
        }
        // once its spins and yields found nothing, intake sleeps on its clients' doorbells, only while nothing is in
        // flight but requests the TCP transport answers itself (no other completion rings a doorbell), and no batch
        // waits in its ring for a tracker such a request gives back
        final org.agrona.concurrent.status.AtomicCounter submitted = counters.get(SystemCounter.REQUESTS_SUBMITTED);
        final org.agrona.concurrent.status.AtomicCounter completed = counters.get(SystemCounter.REQUESTS_COMPLETED);
        final org.agrona.concurrent.status.AtomicCounter failed = counters.get(SystemCounter.REQUESTS_FAILED);
        this.doorbells = new SubmitRingDoorbells(registry,
            () -> pipeline.isIdle() && !intake.waitsForBatchTracker() && submitted.get() - completed.get() -
                failed.get() - (transport == null ? 0 : transport.requestsAnsweredOnItsOwn()) == 0);
        if (context.threadingMode() == ThreadingMode.SHARED)
        {
            final List<Agent> all = new ArrayList<>();
            all.add(intake);
            all.addAll(workers);
            dataPlaneRunners.add(runner(new CompositeAgent(all), doorbells));
        }
        else
        {
            dataPlaneRunners.add(runner(intake, doorbells));
            workers.forEach(worker -> dataPlaneRunners.add(runner(worker, null)));
        }

        this.metadata = ClusterMetadata.create(context, peerServer::describe, transport);
        this.conductor = new ControlConductor(context, directory, registry, cnc, disconnects, counters,
            SystemEpochClock.INSTANCE, transport, metadata);
        conductor.segmentPorts(peerServer.segmentListeners());
        this.statusFile = StatusFileWriter.create(context.directory(), context.describe(),
            java.util.Map.of("rdma", Verbs.availability().toString()), SystemEpochClock.INSTANCE);
        // the Chronicle Map opens once serving, on a thread of its own; xferd status reads the status file
        this.registryWriter = DeferredStatusMap.of(() -> StatusMapWriter.create(context, Process.pid()));
        this.notifier = new SystemdNotifier(System.getenv(),
            dutyCycles.stream().<java.util.function.LongSupplier>map(tracker -> tracker::cycles).toList());
        conductor.quietPollAtMost(notifier.watchdogIntervalMs() / 2); // the ping goes out from housekeeping
        conductor.operations(new ConductorListener()
        {
            public void onClientConnected(final ClientSession session)
            {
                doorbells.wake(); // a sleeping intake marks the new client's doorbell too
                statusFile.onClientConnected(session);
                registryWriter.onClientConnected(session);
            }

            public void onRegionAdded(final ClientSession session, final io.xferd.daemon.memory.Region region)
            {
                syncRdma(session);
                statusFile.onRegionAdded(session, region);
                registryWriter.onRegionAdded(session, region);
            }

            public void onRegionRemoved(final ClientSession session, final io.xferd.daemon.memory.Region region)
            {
                syncRdma(session);
                statusFile.onRegionRemoved(session, region);
                registryWriter.onRegionRemoved(session, region);
            }

            public void onRegionsChanged(final ClientSession session)
            {
                syncRdma(session);
                statusFile.onRegionsChanged(session);
                registryWriter.onRegionsChanged(session);
            }

            private void syncRdma(final ClientSession session)
            {
                if (rdmaRegistrar != null)
                {
                    rdmaRegistrar.sync(session.regions()); // before the descriptor is published
                }
            }

            public void onClientDisconnected(final ClientSession session)
            {
                if (rdmaRegistrar != null)
                {
                    rdmaRegistrar.retireClosed();
                }
                statusFile.onClientDisconnected(session);
                registryWriter.onClientDisconnected(session);
            }

            public void onHousekeeping(final long nowMs)
            {
                if (rdmaRegistrar != null)
                {
                    rdmaRegistrar.deregisterReclaimable();
                }
                statusFile.onHousekeeping(nowMs);
                registryWriter.onHousekeeping(nowMs);
                notifier.onHousekeeping(nowMs);
            }
        });
        this.metrics = MetricsEndpoint.start(context.operations(),
            new MetricsCollector(counters, journal.stats(), journal.names())
                .peers(() -> transport instanceof TcpTransport tcp ? tcp.links().values() : java.util.List.of()));
        this.conductorThread = new Thread(this::runConductor, "xferd-conductor");
    }

    /**
     * Claim the directory and start serving.
     *
     * @throws io.xferd.daemon.control.DaemonAlreadyRunningException when a live daemon serves the directory.
     * @throws io.xferd.daemon.config.ConfigException when the transport or metadata backend cannot be served.
     */
    public static XferDaemon launch(final DaemonContext context)
    {
        context.conclude();
        final RdmaDevices rdmaDevices = openTransport(context);
        final XferDaemon daemon = new XferDaemon(context, rdmaDevices);
        AgentRunner.startOnThread(daemon.storageRunner);
        daemon.agents.watch("storage stage", daemon.storageRunner::thread);
        for (final AgentRunner runner : daemon.dataPlaneRunners)
        {
            AgentRunner.startOnThread(runner);
            daemon.agents.watch("data plane agent " + runner.agent().roleName(), runner::thread);
        }
        daemon.agents.watch("journal", daemon.journal::thread);
        daemon.peerServer.start();
        daemon.peerServer.acceptorThreads().forEach(thread -> daemon.agents.watch("peer acceptor", () -> thread));
        daemon.conductorThread.start();
        if (daemon.metadata != null)
        {
            daemon.metadata.start();
        }
        LOG.info("xferd daemon serving {} (pid {}, {} threading, {} transfer worker(s), idle {}, transport {})",
            context.directory(), Process.pid(), context.threadingMode(), context.transferWorkers(),
            context.idleStrategy(), context.transportInUse());
        daemon.notifier.ready("serving " + context.directory());
        // observers' structures, off the path to serving: the journal's thread opens its Chronicle Queue and writes
        // what the data plane recorded meanwhile; the registry's Chronicle Map opens on a thread of its own
        daemon.journal.start();
        daemon.registryWriter.start();
        return daemon;
    }

    /**
     * Select the transport and, for RDMA, open its devices, before anything is claimed.
     *
     * @return the opened devices when RDMA runs; null for TCP (chosen, or named as the fallback).
     */
    private static RdmaDevices openTransport(final DaemonContext context)
    {
        String why = "RDMA is not available: " + Verbs.availability().reason();
        if (TransportSelector.select(context, Verbs::availability) == TransportSelector.Transport.RDMA)
        {
            try
            {
                final RdmaDevices devices = RdmaDevices.open(context.deviceNames(), context.gidIndex());
                context.transportInUse("rdma on " + String.join(",", devices.names()));
                LOG.info("RDMA transport on {}", devices);
                return devices;
            }
            catch (final RuntimeException ex)
            {
                why = "its devices cannot be opened: " + ex.getMessage();
                TransportSelector.fallbackOrRefuse(context, why);
            }
        }
        context.transportInUse("rdma".equals(context.protocol()) ? "tcp (protocol_fallback, because " + why + ")" :
            "tcp");
        return null;
    }

    private AgentRunner runner(final Agent agent, final Doorbell doorbell)
    {
        final DutyCycleTracker tracked = new DutyCycleTracker(agent);
        dutyCycles.add(tracked);
        final org.agrona.concurrent.IdleStrategy idle = context.newIdleStrategy();
        if (doorbell != null && idle instanceof DozingBackoffIdleStrategy dozing)
        {
            // a sleep a client's submit ends, not the back-off's parks (a futex and a timer each, work or not)
            dozing.doorbell(doorbell, context.dataPlaneSleepNs()).sleepOnDoorbellAfter(dozing.idlesBeforeParking());
        }
        return new AgentRunner(idle,
            throwable -> LOG.error("data plane error in {}", agent.roleName(), throwable), null, tracked);
    }

    private void runConductor()
    {
        try
        {
            final org.agrona.concurrent.EpochClock clock = SystemEpochClock.INSTANCE;
            while (running)
            {
                conductor.doWork();
                agents.check(clock.time());
            }
            drainAndDisconnect();
        }
        catch (final Throwable t)
        {
            // nobody would accept, answer or cut off clients any more, nor beat the heart: stop rather than hold the
            // directory with a dead conductor (the command exits non-zero, so systemd restarts the daemon)
            LOG.error(t instanceof AgentWatch.AgentDiedException ? t.getMessage() :
                "conductor failed: the daemon stops", t);
            failure = t;
        }
        finally
        {
            conductorStopped.countDown();
            if (failure != null)
            {
                onFailure.run();
            }
        }
    }

    private void drainAndDisconnect()
    {
        conductor.stopAccepting();
        final long deadline = System.currentTimeMillis() + context.drainTimeoutMs();
        while (System.currentTimeMillis() < deadline &&
            (registry.anySubmitBacklog() || !pipeline.isIdle()))
        {
            conductor.doWork();
        }
        if (!pipeline.isIdle())
        {
            LOG.warn("shutdown: {} request(s) still in the pipeline after {} ms", pipeline.backlog(),
                context.drainTimeoutMs());
        }
        conductor.disconnectAll("daemon shutting down");
        while (System.currentTimeMillis() < deadline + context.drainTimeoutMs() && !conductor.isQuiescent())
        {
            conductor.doWork();
        }
    }

    /**
     * A daemon's epoch: different for every start, so peers notice a restart and drop what they cached.
     */
    private static long newEpoch()
    {
        return System.currentTimeMillis() << 16 | (ProcessHandle.current().pid() & 0xFFFF);
    }

    /**
     * Run {@code action} (once, on the failing thread) if a daemon thread dies; at once if one already has.
     */
    public void onFailure(final Runnable action)
    {
        this.onFailure = action;
        if (failure != null && conductorStopped.getCount() == 0)
        {
            action.run();
        }
    }

    /**
     * @return what killed a daemon thread, or null while all live.
     */
    public Throwable failure()
    {
        return failure;
    }

    /**
     * @return true once the registry's Chronicle Map, opened after serving, is written on every change.
     */
    boolean isWritingRegistry()
    {
        return registryWriter.isWriting();
    }

    ControlConductor conductor()
    {
        return conductor;
    }

    /**
     * @return host:port peers reach this daemon at.
     */
    public String rpcAddress()
    {
        return peerServer.advertisedAddress();
    }

    public PeerTransport transport()
    {
        return transport;
    }

    public DaemonContext context()
    {
        return context;
    }

    public SystemCounters counters()
    {
        return counters;
    }

    /**
     * @return the port the metrics endpoint listens on, or -1 when it does not run.
     */
    public int metricsPort()
    {
        return metrics != null ? metrics.port() : -1;
    }

    /**
     * @return the metadata store side of the daemon, or null with P2PHANDSHAKE.
     */
    public ClusterMetadata metadata()
    {
        return metadata;
    }

    /**
     * Drain, disconnect everyone, free all memory and remove the directory's files. Idempotent.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        notifier.stopping();
        running = false;
        conductor.wake(); // a quiet conductor would finish its poll (up to 250 ms) before it saw the stop
        try
        {
            conductorStopped.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        peerServer.close();
        if (transport instanceof RdmaTransport rdma)
        {
            // QPs and CQs outlive the agent that polls them: stop intake, stop the agent, then destroy
            rdma.stop();
        }
        else
        {
            transport.close();
        }
        doorbells.stop(); // a sleeping intake thread would finish its sleep before it saw the runner stop
        for (final AgentRunner runner : dataPlaneRunners)
        {
            runner.close();
        }
        storageRunner.close(); // after the workers and peer threads that submit to it
        storageSegments.close();
        if (transport instanceof RdmaTransport)
        {
            transport.close();
        }
        journal.close();
        if (metrics != null)
        {
            metrics.close();
        }
        conductor.close();
        if (metadata != null)
        {
            // after every client was disconnected: their keys are deleted (or left to the TTL if the store is away)
            metadata.close();
        }
        registryWriter.close();
        statusFile.close();
        directory.close();
        LOG.info("xferd daemon stopped");
    }
}
