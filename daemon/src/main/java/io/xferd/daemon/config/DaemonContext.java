package io.xferd.daemon.config;

import io.xferd.daemon.agent.DozingBackoffIdleStrategy;
import io.xferd.daemon.agent.ThreadingMode;
import org.agrona.BitUtil;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Everything the daemon is configured with, in one typed object: defaults here, overridden by the command line
 * (and, later, the config file), checked once by {@link #conclude()}, and printable as it is in force.
 */
public final class DaemonContext
{
    public static final Path DEFAULT_DIRECTORY = Path.of("/dev/shm/xferd");

    private Path directory = DEFAULT_DIRECTORY;
    private int submitRingCapacity = 1024 * 1024;
    private int maxBatchEntries = 4096;
    private int batchTrackersPerClient = 64;
    private int maxRegionsPerClient = 16384;
    private int maxPendingConnections = 64;
    private long helloTimeoutMs = 5000;
    private int maxPendingControlPerClient = 64;
    private int completionRingCapacity = 256 * 1024;
    private int maxClients = 128;
    private long maxRequestLength = 4L * 1024 * 1024 * 1024;
    private int pipelineSize = 4096;
    private ThreadingMode threadingMode = ThreadingMode.SHARED;
    private int transferWorkers = 1;
    private String idleStrategy = "backoff";
    private long dataPlaneSleepNs = DATA_PLANE_SLEEP_NS;
    /** The idle strategy that spins {@link #SPIN_NANOS} after work before it backs off. */
    public static final String SPIN_BACKOFF = "spin-backoff";
    static final long SPIN_NANOS = 100_000;
    private long livenessTimeoutMs = 2000;
    private long drainTimeoutMs = 5000;
    private int countersCapacity = 1024;
    private long dutyCycleByteBudget = 8L * 1024 * 1024;
    private String rpcAddress = "127.0.0.1:12001";
    /** {@code gid_index: "auto"}: chosen per port (see the RDMA transport's GidIndexSelector). */
    public static final int GID_INDEX_AUTO = -1;

    private String protocol = "tcp";
    private String protocolFallback = "none";
    private int gidIndex = GID_INDEX_AUTO;
    private String transportInUse;
    private java.util.List<String> deviceNames = java.util.List.of();
    private int[] allowedUids = new int[0];
    private final java.util.Map<String, io.xferd.daemon.session.AccessPolicy.Grant> segmentGrants =
        new java.util.TreeMap<>();
    private int[] allowedGids = new int[0];
    private String clusterToken;
    private Path clusterTokenFile;
    private String clusterTokenSource;
    private boolean peerAuthentication = true;
    private Path metadataTokenFile;
    private io.xferd.daemon.config.MetadataAccess metadataAccess = io.xferd.daemon.config.MetadataAccess.NONE;
    private int connectionsPerPeer = 2;
    private String tcpCongestion;
    private int maxPeerConnections = 256;
    private int sliceSize = 512 * 1024;
    private int stagingBufferSize = 1024 * 1024;
    private int storageQueueDepth = io.xferd.daemon.storage.StorageIo.DEFAULT_QUEUE_DEPTH;
    private java.util.List<StorageSegmentConfig> storageSegments = java.util.List.of();
    private long transferTimeoutMs = 5000;
    private String metadataServer = "P2PHANDSHAKE";
    private Path topologyMatrixFile;
    private String clusterId = "default";
    private long metadataTtlMs = 10_000;
    private final Map<String, String> notUsed = new LinkedHashMap<>();
    private final OperationsContext operations = new OperationsContext();
    private io.xferd.daemon.memory.DeviceMemory deviceMemory = new io.xferd.daemon.memory.CudaDeviceMemory();
    private io.xferd.daemon.host.LocalNics localNics;

    /**
     * Check every value and fill in what follows from others.
     *
     * @throws IllegalArgumentException naming the setting that is wrong.
     */
    public DaemonContext conclude()
    {
        requirePowerOfTwo("submit ring capacity", submitRingCapacity);
        require(submitRingCapacity >= 64 * 1024, "submit ring capacity must be at least 64 KiB: " + submitRingCapacity);
        require(maxBatchEntries >= 1, "max batch entries must be positive: " + maxBatchEntries);
        require(maxPendingConnections >= 1 && maxPendingConnections <= 4096,
            "max pending connections must be 1..4096: " + maxPendingConnections);
        require(helloTimeoutMs >= 10, "HELLO timeout must be at least 10 ms: " + helloTimeoutMs);
        require(maxRegionsPerClient >= 1, "max regions per client must be positive: " + maxRegionsPerClient);
        require(maxPendingControlPerClient >= 1 && maxPendingControlPerClient <= 4096,
            "max pending control requests per client must be 1..4096: " + maxPendingControlPerClient);
        require(batchTrackersPerClient >= 1 && batchTrackersPerClient <= 4096,
            "batch trackers per client must be 1..4096: " + batchTrackersPerClient);
        requirePowerOfTwo("completion ring capacity", completionRingCapacity);
        requirePowerOfTwo("pipeline size", pipelineSize);
        require(maxClients > 0 && maxClients <= 65536, "max clients must be 1..65536: " + maxClients);
        require(maxRequestLength > 0, "max request length must be positive: " + maxRequestLength);
        require(transferWorkers >= 1 && transferWorkers <= 64, "transfer workers must be 1..64: " + transferWorkers);
        require(livenessTimeoutMs >= 100, "liveness timeout must be at least 100 ms: " + livenessTimeoutMs);
        require(directory != null, "directory must be set");
        require("tcp".equals(protocol) || "rdma".equals(protocol), "protocol must be tcp or rdma: " + protocol);
        require("none".equals(protocolFallback) || "tcp".equals(protocolFallback),
            "protocol fallback must be none or tcp: " + protocolFallback);
        require(gidIndex >= GID_INDEX_AUTO && gidIndex <= 255, "gid index must be auto or 0..255: " + gidIndex);
        require(connectionsPerPeer >= 1 && connectionsPerPeer <= 64,
            "connections per peer must be 1..64: " + connectionsPerPeer);
        require(tcpCongestion == null || tcpCongestion.matches("[a-z0-9_]{1,15}"),
            "tcp congestion control must be 1..15 of a-z 0-9 _ (e.g. cubic): " + tcpCongestion);
        require(maxPeerConnections >= 1 && maxPeerConnections <= 65536,
            "max peer connections must be 1..65536: " + maxPeerConnections);
        require(sliceSize >= 4096 && sliceSize <= 64 * 1024 * 1024, "slice size must be 4 KiB..64 MiB: " + sliceSize);
        require(stagingBufferSize >= 4096 && stagingBufferSize <= 64 * 1024 * 1024,
            "staging buffer size must be 4 KiB..64 MiB: " + stagingBufferSize);
        require(storageQueueDepth >= 1 && storageQueueDepth <= 4096,
            "storage queue depth must be 1..4096: " + storageQueueDepth);
        require(transferTimeoutMs >= 10, "transfer timeout must be at least 10 ms: " + transferTimeoutMs);
        require(clusterToken == null || !clusterToken.isEmpty(), "cluster token must not be empty when set");
        if (clusterToken != null)
        {
            io.xferd.daemon.config.ClusterKey.requireLongEnough(clusterToken, "the cluster token");
        }
        require(peerAuthentication || (clusterToken == null && clusterTokenFile == null),
            "peer authentication is off (--insecure-no-peer-auth, peer_auth: none) and a cluster token is set: " +
            "choose one");
        require(clusterId != null && clusterId.matches("[A-Za-z0-9._-]{1,64}"),
            "cluster id must be 1..64 of A-Z a-z 0-9 . _ -: " + clusterId);
        require(metadataTtlMs >= 1000, "metadata TTL must be at least 1000 ms: " + metadataTtlMs);
        rpcHost();
        rpcPort();
        newIdleStrategy();
        operations.conclude(this);
        return this;
    }

    /**
     * Completions in flight per client never exceed half the completion ring, so the daemon can always write
     * them; the other half is room for notifications.
     */
    public int maxInFlightPerClient()
    {
        final int completionRecord = BitUtil.align(8 + io.xferd.ipc.CompletionFlyweight.LENGTH, 8);
        return Math.max(1, completionRingCapacity / completionRecord / 2);
    }

    /**
     * The longest the intake thread sleeps on its clients' doorbells after a long quiet spell (backoff and
     * spin-backoff): what the first request of a client that does not ring them (an older one) may wait.
     */
    public static final long DATA_PLANE_SLEEP_NS = 100_000_000L;

    /**
     * @param value the longest the intake thread sleeps on its clients' doorbells (default
     *              {@link #DATA_PLANE_SLEEP_NS}; tests make it long, so that only a doorbell can wake it).
     */
    public DaemonContext dataPlaneSleepNs(final long value)
    {
        if (value <= 0)
        {
            throw new IllegalArgumentException("data-plane sleep must be positive: " + value);
        }
        this.dataPlaneSleepNs = value;
        return this;
    }

    public long dataPlaneSleepNs()
    {
        return dataPlaneSleepNs;
    }

    public IdleStrategy newIdleStrategy()
    {
        return switch (idleStrategy)
        {
            // spin, then yield, then park from 1 us up to 100 us: fast to wake, gentle on 2 cores; after ~100 ms
            // without work, doze in 1 ms parks so that an idle daemon costs ~1% of a core, not ~15%; after a further
            // ~2 s, in 2 ms parks (half the wake-ups of an idle daemon; the first request after it waits <= 2 ms); the
            // intake thread sleeps on its clients' doorbells instead (XferDaemon: DozingBackoffIdleStrategy#doorbell)
            case "backoff" -> new DozingBackoffIdleStrategy(100, 20, 1_000, 100_000, 1_200, 1_000_000, 3_200,
                2_000_000);
            // the same after 100 us of spinning since the last work (peer senders too): a client waiting on one small
            // remote READ submits its next within that and finds the daemon awake; for hosts with cores to spare (on
            // an oversubscribed host the spinning threads take the CPU the answering ones need)
            case SPIN_BACKOFF -> new DozingBackoffIdleStrategy(100, 20, 1_000, 100_000, 1_200, 1_000_000, 3_200,
                2_000_000, SPIN_NANOS);
            case "yielding" -> new YieldingIdleStrategy();
            case "busy-spin" -> new BusySpinIdleStrategy();
            case "sleeping" -> new SleepingMillisIdleStrategy(1);
            default -> throw new IllegalArgumentException(
                "idle strategy must be backoff, spin-backoff, yielding, busy-spin or sleeping: " + idleStrategy);
        };
    }

    public Map<String, Object> describe()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        map.put("directory", directory.toString());
        map.put("rpc_address", rpcAddress);
        map.put("threading_mode", threadingMode.name());
        map.put("transfer_workers", transferWorkers);
        map.put("idle_strategy", idleStrategy);
        map.put("submit_ring_capacity", submitRingCapacity);
        map.put("max_batch_entries", maxBatchEntriesInForce());
        map.put("batch_trackers_per_client", batchTrackersPerClient);
        map.put("max_regions_per_client", maxRegionsPerClient);
        map.put("max_pending_connections", maxPendingConnections);
        map.put("hello_timeout_ms", helloTimeoutMs);
        map.put("max_pending_control_per_client", maxPendingControlPerClient);
        map.put("completion_ring_capacity", completionRingCapacity);
        map.put("max_in_flight_per_client", maxInFlightPerClient());
        map.put("max_clients", maxClients);
        map.put("allowed_uids", java.util.Arrays.toString(allowedUids));
        if (!segmentGrants.isEmpty())
        {
            map.put("segment_grants", segmentGrants.toString());
        }
        map.put("allowed_gids", java.util.Arrays.toString(allowedGids));
        map.put("max_request_length", maxRequestLength);
        map.put("pipeline_size", pipelineSize);
        map.put("liveness_timeout_ms", livenessTimeoutMs);
        map.put("drain_timeout_ms", drainTimeoutMs);
        map.put("protocol", protocol);
        if (transportInUse != null)
        {
            map.put("transport", transportInUse);
        }
        map.put("protocol_fallback", protocolFallback);
        map.put("device_name", String.join(",", deviceNames));
        map.put("gid_index", gidIndex == GID_INDEX_AUTO ? "auto" : gidIndex);
        map.put("topology_matrix", topologyMatrixFile == null ? "(discovered)" : topologyMatrixFile.toString());
        map.put("metadata_server", metadataServer);
        map.put("cluster_id", clusterId);
        map.put("metadata_ttl_ms", metadataTtlMs);
        if (metadataTokenFile != null)
        {
            map.put("metadata_token_file", metadataTokenFile.toString());
        }
        map.putAll(metadataAccess.describe());
        map.put("peer_auth", peerAuthentication ? "token" : "none (INSECURE: any peer that reaches the RPC port " +
            "can read and write every client's memory)");
        map.put("cluster_token", clusterTokenSource != null ? clusterTokenSource :
            clusterToken != null ? "(set)" : clusterTokenFile != null ? "file " + clusterTokenFile :
            peerAuthentication ? "file <dir>/" + io.xferd.daemon.config.ClusterKey.DEFAULT_FILE_NAME +
            " (created at start when absent)" : "(none)");
        map.put("connections_per_peer", connectionsPerPeer);
        map.put("tcp_congestion", tcpCongestion != null ? tcpCongestion :
            "(the host's net.ipv4.tcp_congestion_control)");
        map.put("max_peer_connections", maxPeerConnections);
        map.put("slice_size", sliceSize);
        map.put("staging_buffer_size", stagingBufferSize);
        map.put("storage_queue_depth", storageQueueDepth);
        map.put("storage_segments", storageSegments.stream().map(StorageSegmentConfig::toString).toList());
        map.put("transfer_timeout_ms", transferTimeoutMs);
        notUsed.forEach((key, why) -> map.put(key, "accepted, not used: " + why));
        operations.describe(map);
        return map;
    }

    private static void requirePowerOfTwo(final String name, final int value)
    {
        require(value > 0 && BitUtil.isPowerOfTwo(value), name + " must be a power of two: " + value);
    }

    private static void require(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalArgumentException(message);
        }
    }

    public Path directory()
    {
        return directory;
    }

    public DaemonContext directory(final Path directory)
    {
        this.directory = directory;
        return this;
    }

    /**
     * Data capacity of each client's submit ring (a power of two; its trailer comes on top).
     */
    public int submitRingCapacity()
    {
        return submitRingCapacity;
    }

    public DaemonContext submitRingCapacity(final int value)
    {
        this.submitRingCapacity = value;
        return this;
    }

    public DaemonContext maxBatchEntries(final int value)
    {
        this.maxBatchEntries = value;
        return this;
    }

    /**
     * The most entries a SUBMIT_BATCH may carry (WELCOME tells clients): as configured, but never more than the
     * largest batch (with a full-size notify) a submit ring record can hold, one eighth of the ring.
     */
    public int maxBatchEntriesInForce()
    {
        final int fitting = (submitRingCapacity / 8 - io.xferd.ipc.SubmitBatchFlyweight.HEADER_LENGTH -
            io.xferd.ipc.SubmitRequestFlyweight.MAX_NOTIFY_LENGTH) / io.xferd.ipc.SubmitBatchFlyweight.ENTRY_LENGTH;
        return Math.max(1, Math.min(maxBatchEntries, fitting));
    }

    /**
     * Connections that have not said HELLO yet the daemon holds at once; more are closed at once.
     */
    public int maxPendingConnections()
    {
        return maxPendingConnections;
    }

    public DaemonContext maxPendingConnections(final int value)
    {
        this.maxPendingConnections = value;
        return this;
    }

    /**
     * How long a new connection has to send its HELLO before the daemon closes it.
     */
    public long helloTimeoutMs()
    {
        return helloTimeoutMs;
    }

    public DaemonContext helloTimeoutMs(final long value)
    {
        this.helloTimeoutMs = value;
        return this;
    }

    /**
     * Regions one client may have registered at once; one more is refused with LIMIT_REACHED.
     */
    public int maxRegionsPerClient()
    {
        return maxRegionsPerClient;
    }

    public DaemonContext maxRegionsPerClient(final int value)
    {
        this.maxRegionsPerClient = value;
        return this;
    }

    /**
     * Control requests of one client the conductor may hold unanswered at once (opens of remote segments, unregisters
     * waiting for a copy to end); one more is refused with LIMIT_REACHED.
     */
    public int maxPendingControlPerClient()
    {
        return maxPendingControlPerClient;
    }

    public DaemonContext maxPendingControlPerClient(final int value)
    {
        this.maxPendingControlPerClient = value;
        return this;
    }

    /**
     * Batches one client may have in flight at once before intake waits for one to end (each is one completion).
     */
    public int batchTrackersPerClient()
    {
        return batchTrackersPerClient;
    }

    public DaemonContext batchTrackersPerClient(final int value)
    {
        this.batchTrackersPerClient = value;
        return this;
    }

    public int completionRingCapacity()
    {
        return completionRingCapacity;
    }

    public DaemonContext completionRingCapacity(final int value)
    {
        this.completionRingCapacity = value;
        return this;
    }

    public int maxClients()
    {
        return maxClients;
    }

    public DaemonContext maxClients(final int value)
    {
        this.maxClients = value;
        return this;
    }

    public long maxRequestLength()
    {
        return maxRequestLength;
    }

    public DaemonContext maxRequestLength(final long value)
    {
        this.maxRequestLength = value;
        return this;
    }

    public int pipelineSize()
    {
        return pipelineSize;
    }

    public DaemonContext pipelineSize(final int value)
    {
        this.pipelineSize = value;
        return this;
    }

    public ThreadingMode threadingMode()
    {
        return threadingMode;
    }

    public DaemonContext threadingMode(final ThreadingMode value)
    {
        this.threadingMode = value;
        return this;
    }

    public int transferWorkers()
    {
        return transferWorkers;
    }

    public DaemonContext transferWorkers(final int value)
    {
        this.transferWorkers = value;
        return this;
    }

    public String idleStrategy()
    {
        return idleStrategy;
    }

    /**
     * @return how long the data plane's threads (the agent, each peer connection's sender) spin after work before
     * they back off: {@value #SPIN_NANOS} ns with {@code spin-backoff}, else 0.
     */
    public long spinAfterWorkNanos()
    {
        return SPIN_BACKOFF.equals(idleStrategy) ? SPIN_NANOS : 0;
    }

    public DaemonContext idleStrategy(final String value)
    {
        this.idleStrategy = value;
        return this;
    }

    public long livenessTimeoutMs()
    {
        return livenessTimeoutMs;
    }

    public DaemonContext livenessTimeoutMs(final long value)
    {
        this.livenessTimeoutMs = value;
        return this;
    }

    public long drainTimeoutMs()
    {
        return drainTimeoutMs;
    }

    public DaemonContext drainTimeoutMs(final long value)
    {
        this.drainTimeoutMs = value;
        return this;
    }

    public int countersCapacity()
    {
        return countersCapacity;
    }

    public long dutyCycleByteBudget()
    {
        return dutyCycleByteBudget;
    }

    /**
     * @return journal, metrics and logging settings.
     */
    public OperationsContext operations()
    {
        return operations;
    }

    public String rpcAddress()
    {
        return rpcAddress;
    }

    public String rpcHost()
    {
        final int colon = rpcAddress.lastIndexOf(':');
        if (colon <= 0)
        {
            throw new IllegalArgumentException("rpc address must be host:port: " + rpcAddress);
        }
        return rpcAddress.substring(0, colon);
    }

    public int rpcPort()
    {
        try
        {
            final int port = Integer.parseInt(rpcAddress.substring(rpcAddress.lastIndexOf(':') + 1));
            if (port < 0 || port > 65535)
            {
                throw new NumberFormatException();
            }
            return port;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("rpc address must be host:port with a port 0..65535: " + rpcAddress);
        }
    }

    public String protocol()
    {
        return protocol;
    }

    public DaemonContext protocol(final String value)
    {
        this.protocol = value;
        return this;
    }

    /**
     * @return "none" (the default: a protocol that cannot be served is an error) or "tcp" (serve TCP, warning
     * loudly, when RDMA is asked for and cannot be served).
     */
    public String protocolFallback()
    {
        return protocolFallback;
    }

    public DaemonContext protocolFallback(final String value)
    {
        this.protocolFallback = value;
        return this;
    }

    /**
     * @return the congestion control algorithm of the daemon's peer data connections (e.g. "cubic"), or null for
     * the host's {@code net.ipv4.tcp_congestion_control}.
     */
    public String tcpCongestion()
    {
        return tcpCongestion;
    }

    public DaemonContext tcpCongestion(final String value)
    {
        this.tcpCongestion = value;
        return this;
    }

    /**
     * @return the GID index RDMA QPs are addressed by, or {@link #GID_INDEX_AUTO}.
     */
    public int gidIndex()
    {
        return gidIndex;
    }

    public DaemonContext gidIndex(final int value)
    {
        this.gidIndex = value;
        return this;
    }

    /**
     * The transport the daemon runs, as {@code xferd status} shows it (e.g. "rdma on mlx5_0,mlx5_1", or "tcp
     * (fallback: ...)"); set by the daemon at start.
     */
    public DaemonContext transportInUse(final String value)
    {
        this.transportInUse = value;
        return this;
    }

    public String transportInUse()
    {
        return transportInUse;
    }

    /**
     * @return uids that may open every local segment, besides each segment's owner and root.
     */
    public int[] allowedUids()
    {
        return allowedUids.clone();
    }

    public DaemonContext allowedUids(final int... value)
    {
        this.allowedUids = value.clone();
        return this;
    }

    /**
     * @return primary gids whose clients may open every local segment.
     */
    public int[] allowedGids()
    {
        return allowedGids.clone();
    }

    public DaemonContext allowedGids(final int... value)
    {
        this.allowedGids = value.clone();
        return this;
    }

    /**
     * Grant one segment (by the name its owner says in HELLO) to more uids and primary gids, on top of
     * {@link #allowedUids()} and {@link #allowedGids()}; a second grant for the same name replaces the first.
     */
    public DaemonContext segmentGrant(final String segmentName, final int[] uids, final int[] gids)
    {
        segmentGrants.put(segmentName, new io.xferd.daemon.session.AccessPolicy.Grant(uids, gids));
        return this;
    }

    public java.util.Map<String, io.xferd.daemon.session.AccessPolicy.Grant> segmentGrants()
    {
        return java.util.Map.copyOf(segmentGrants);
    }

    public io.xferd.daemon.session.AccessPolicy accessPolicy()
    {
        return new io.xferd.daemon.session.AccessPolicy(allowedUids, allowedGids, segmentGrants);
    }

    public java.util.List<String> deviceNames()
    {
        return deviceNames;
    }

    public DaemonContext deviceNames(final java.util.List<String> value)
    {
        this.deviceNames = java.util.List.copyOf(value);
        return this;
    }

    public String clusterToken()
    {
        return clusterToken;
    }

    /**
     * A shared secret of at least 32 characters: peers prove they know it in the handshake (HMAC over nonces,
     * epochs and roles) or are refused, and every frame after it carries a tag keyed from it.
     */
    public DaemonContext clusterToken(final String value)
    {
        this.clusterToken = value;
        return this;
    }

    public Path clusterTokenFile()
    {
        return clusterTokenFile;
    }

    /**
     * Where the cluster token is read from, and created (256 random bits, mode 0600) when absent; default
     * {@code <dir>/cluster.token}. Not used when {@link #clusterToken(String)} is set.
     */
    public DaemonContext clusterTokenFile(final Path value)
    {
        this.clusterTokenFile = value;
        return this;
    }

    /**
     * Where the token in force came from, as {@code xferd status} shows it (set when the daemon resolves it).
     */
    public DaemonContext clusterTokenSource(final String value)
    {
        this.clusterTokenSource = value;
        return this;
    }

    public Path metadataTokenFile()
    {
        return metadataTokenFile;
    }

    /**
     * The bearer token an http metadata store requires ({@code xferd metadata-server --token-file}), or null.
     */
    public DaemonContext metadataTokenFile(final Path value)
    {
        this.metadataTokenFile = value;
        return this;
    }

    public io.xferd.daemon.config.MetadataAccess metadataAccess()
    {
        return metadataAccess;
    }

    /**
     * Credentials and TLS for an etcd or redis metadata store ({@code metadata_username} ...).
     */
    public DaemonContext metadataAccess(final io.xferd.daemon.config.MetadataAccess value)
    {
        this.metadataAccess = java.util.Objects.requireNonNull(value);
        return this;
    }

    public boolean peerAuthentication()
    {
        return peerAuthentication;
    }

    /**
     * Whether peers must prove the cluster token (default). Off only through {@code --insecure-no-peer-auth} or
     * {@code peer_auth: none}: then anyone who reaches the RPC port reads and writes every client's memory.
     */
    public DaemonContext peerAuthentication(final boolean value)
    {
        this.peerAuthentication = value;
        return this;
    }

    public int connectionsPerPeer()
    {
        return connectionsPerPeer;
    }

    public DaemonContext connectionsPerPeer(final int value)
    {
        this.connectionsPerPeer = value;
        return this;
    }

    public int maxPeerConnections()
    {
        return maxPeerConnections;
    }

    /**
     * How many connections the RPC port serves at once (each has a thread); an eighth of them (at least 4) may be
     * in the handshake. Connections over either cap are closed at once.
     */
    public DaemonContext maxPeerConnections(final int value)
    {
        this.maxPeerConnections = value;
        return this;
    }

    public int sliceSize()
    {
        return sliceSize;
    }

    public DaemonContext sliceSize(final int value)
    {
        this.sliceSize = value;
        return this;
    }

    public int stagingBufferSize()
    {
        return stagingBufferSize;
    }

    /**
     * The pinned host buffer each peer thread moves GPU memory through over TCP, a chunk of this size per device
     * copy; allocated on the first GPU slice. Any slice size works with any staging size.
     */
    public DaemonContext stagingBufferSize(final int value)
    {
        this.stagingBufferSize = value;
        return this;
    }

    /**
     * @return the segments the daemon serves from its own configuration ({@code storage_segments}).
     */
    public java.util.List<StorageSegmentConfig> storageSegments()
    {
        return storageSegments;
    }

    /**
     * Each segment's uids and gids become its grant in the access policy.
     */
    public DaemonContext storageSegments(final java.util.List<StorageSegmentConfig> segments)
    {
        this.storageSegments = java.util.List.copyOf(segments);
        for (final StorageSegmentConfig segment : segments)
        {
            if (segment.uids().length > 0 || segment.gids().length > 0)
            {
                segmentGrant(segment.name(), segment.uids(), segment.gids());
            }
        }
        return this;
    }

    public int storageQueueDepth()
    {
        return storageQueueDepth;
    }

    /**
     * The most file operations each data-plane thread (transfer worker, peer thread) keeps in flight on its own
     * io_uring for storage regions.
     */
    public DaemonContext storageQueueDepth(final int value)
    {
        this.storageQueueDepth = value;
        return this;
    }

    public long transferTimeoutMs()
    {
        return transferTimeoutMs;
    }

    public DaemonContext transferTimeoutMs(final long value)
    {
        this.transferTimeoutMs = value;
        return this;
    }

    public Path topologyMatrixFile()
    {
        return topologyMatrixFile;
    }

    /**
     * A Mooncake-form topology matrix file that replaces the discovered one (which NICs each memory location
     * prefers); its NICs are the striping NICs unless {@code device_name} narrows them.
     */
    public DaemonContext topologyMatrixFile(final Path value)
    {
        this.topologyMatrixFile = value;
        return this;
    }

    public String metadataServer()
    {
        return metadataServer;
    }

    public DaemonContext metadataServer(final String value)
    {
        this.metadataServer = value;
        return this;
    }

    public String clusterId()
    {
        return clusterId;
    }

    /**
     * The namespace of this daemon's keys in the metadata store ({@code xferd/<cluster id>/segments/...}).
     */
    public DaemonContext clusterId(final String value)
    {
        this.clusterId = value;
        return this;
    }

    public long metadataTtlMs()
    {
        return metadataTtlMs;
    }

    /**
     * How long this daemon's keys outlive it in the metadata store; renewed every third of it.
     */
    public DaemonContext metadataTtlMs(final long value)
    {
        this.metadataTtlMs = value;
        return this;
    }

    /**
     * Record a configuration field that was accepted but has no effect here, with the reason, so that
     * {@link #describe()} (and {@code xferd status}) shows it.
     */
    public DaemonContext notUsed(final String field, final String reason)
    {
        notUsed.put(field, reason);
        return this;
    }

    public DaemonContext rpcAddress(final String value)
    {
        this.rpcAddress = value;
        return this;
    }

    /**
     * @return the striping NICs given by {@link #localNics(io.xferd.daemon.host.LocalNics)}, or null: found from
     * {@code device_name} at start.
     */
    public io.xferd.daemon.host.LocalNics localNics()
    {
        return localNics;
    }

    /**
     * The NICs TCP slices are striped over, instead of looking them up: tests use it to give a daemon a path that
     * always fails.
     */
    public DaemonContext localNics(final io.xferd.daemon.host.LocalNics value)
    {
        this.localNics = value;
        return this;
    }

    public io.xferd.daemon.memory.DeviceMemory deviceMemory()
    {
        return deviceMemory;
    }

    /**
     * The GPU runtime behind GPU memory registrations and copies: CUDA by default (loaded on first use). Tests put
     * host memory behind it to check the daemon's GPU plumbing on hosts without a GPU.
     */
    public DaemonContext deviceMemory(final io.xferd.daemon.memory.DeviceMemory value)
    {
        this.deviceMemory = value;
        return this;
    }
}
