package io.xferd.daemon.tools.cli;

import io.xferd.daemon.agent.ThreadingMode;
import io.xferd.daemon.config.ConfigFile;
import io.xferd.daemon.config.DaemonContext;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;

/**
 * The daemon's settings on the command line, shared by {@code xferd daemon} and {@code xferd config}: the config
 * file is applied first, then each option the user actually gave overrides it (an option left out keeps what the
 * file, or the embedded default, says).
 */
public final class DaemonOptions
{
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    /**
     * The options given, when {@link DaemonArguments} read them without picocli; null under picocli, which knows.
     */
    java.util.Set<String> givenOptions;

    @Option(names = "--config", paramLabel = "FILE",
        description = "JSON config file: xferd's fields and the seeds' mooncake.json fields (see docs/user-guide.md).")
    Path config;

    @Option(names = "--dir", description = "Runtime directory (default: ${DEFAULT-VALUE}).")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    @Option(names = "--threading", description = "SHARED (one data-plane thread, for small hosts) or DEDICATED " +
        "(default: ${DEFAULT-VALUE}).")
    ThreadingMode threading = ThreadingMode.SHARED;

    @Option(names = "--workers", description = "Transfer workers (default: ${DEFAULT-VALUE}).")
    int workers = 1;

    @Option(names = "--idle", description = "Idle strategy: backoff, spin-backoff (backoff after 100 us of " +
        "spinning since the last work: lower latency for one request at a time, for hosts with cores to spare), " +
        "yielding, busy-spin, sleeping " +
        "(default: ${DEFAULT-VALUE}).")
    String idle = "backoff";

    @Option(names = "--rpc-address", description = "This daemon's host:port, the prefix of its segment names " +
        "(default: ${DEFAULT-VALUE}).")
    String rpcAddress = "127.0.0.1:12001";

    @Option(names = "--liveness-timeout-ms", description = "Heartbeat age after which the daemon counts as gone " +
        "(default: ${DEFAULT-VALUE}).")
    long livenessTimeoutMs = 2000;

    @Option(names = "--protocol", description = "Peer transport: tcp or rdma (default: ${DEFAULT-VALUE}).")
    String protocol = "tcp";

    @Option(names = "--protocol-fallback", description = "none, or tcp to serve TCP (with a WARN) when rdma is " +
        "asked for and cannot be served (default: ${DEFAULT-VALUE}).")
    String protocolFallback = "none";

    @Option(names = "--gid-index", description = "GID index of RDMA QPs: auto or 0..255 (default: ${DEFAULT-VALUE}).")
    String gidIndex = "auto";

    @Option(names = "--device-name", split = ",", paramLabel = "NIC",
        description = "NICs to stripe TCP slices over, or RDMA devices with --protocol rdma (all when absent), " +
            "comma-separated (default: TCP: the OS's route, no striping).")
    java.util.List<String> deviceNames = java.util.List.of();

    @Option(names = "--topology-matrix", paramLabel = "FILE",
        description = "Mooncake-form topology matrix JSON replacing the discovered one (e.g. from `xferd topology --json`).")
    Path topologyMatrix;

    @Option(names = "--cluster-token-file", paramLabel = "FILE",
        description = "File holding the cluster token peers must prove (HMAC) in the handshake; created with 256 " +
            "random bits (mode 0600) when absent (default: <dir>/cluster.token). Copy it to every daemon.")
    Path clusterTokenFile;

    @Option(names = "--insecure-no-peer-auth",
        description = "Serve peers WITHOUT authentication: anyone who reaches the RPC port can read and write " +
            "every client's memory. Only for a network nobody else can reach.")
    boolean insecureNoPeerAuth;

    @Option(names = "--metadata-token-file", paramLabel = "FILE",
        description = "Bearer token of an http metadata store (xferd metadata-server --token-file).")
    Path metadataTokenFile;

    @Option(names = "--connections-per-peer", description = "Pooled TCP connections per peer and path " +
        "(default: ${DEFAULT-VALUE}).")
    int connectionsPerPeer = 2;

    @Option(names = "--tcp-congestion", paramLabel = "NAME",
        description = "TCP congestion control of the peer data connections, e.g. cubic or reno (default: the " +
            "host's net.ipv4.tcp_congestion_control). cubic avoids BBR's PROBE_RTT stalls of loaded connections.")
    String tcpCongestion;

    @Option(names = "--slice-size", description = "Bytes per slice of a remote request (default: ${DEFAULT-VALUE}).")
    int sliceSize = 512 * 1024;

    @Option(names = "--transfer-timeout-ms", description = "A peer that does not answer within this fails the " +
        "slices waiting on it (default: ${DEFAULT-VALUE}).")
    long transferTimeoutMs = 5000;

    @Option(names = "--metadata-server", description = "P2PHANDSHAKE (default), etcd://host:port[,host:port], " +
        "redis://host:port, http://host:port/path, or host:port (etcd).")
    String metadataServer;

    @Option(names = "--cluster-id", description = "Namespace of this daemon's keys in the metadata store " +
        "(default: default).")
    String clusterId;

    @Option(names = "--metadata-ttl-ms", description = "How long this daemon's keys outlive it in the metadata " +
        "store (default: 10000).")
    long metadataTtlMs;

    /**
     * @return a fresh context: embedded defaults, then the config file, then the options given; concluded.
     * @throws IllegalArgumentException (a {@link io.xferd.daemon.config.ConfigException} for the file) saying what
     *                                  is wrong.
     */
    public DaemonContext context()
    {
        final DaemonContext context = new DaemonContext();
        if (config != null)
        {
            ConfigFile.apply(config, context);
        }
        if (given("--dir"))
        {
            context.directory(directory);
        }
        if (given("--threading"))
        {
            context.threadingMode(threading);
        }
        if (given("--workers"))
        {
            context.transferWorkers(workers);
        }
        if (given("--idle"))
        {
            context.idleStrategy(idle);
        }
        if (given("--rpc-address"))
        {
            context.rpcAddress(rpcAddress);
        }
        if (given("--liveness-timeout-ms"))
        {
            context.livenessTimeoutMs(livenessTimeoutMs);
        }
        if (given("--protocol"))
        {
            context.protocol(protocol);
        }
        if (given("--protocol-fallback"))
        {
            context.protocolFallback(protocolFallback.toLowerCase(java.util.Locale.ROOT));
        }
        if (given("--gid-index"))
        {
            try
            {
                context.gidIndex("auto".equalsIgnoreCase(gidIndex) ? io.xferd.daemon.config.DaemonContext.GID_INDEX_AUTO :
                    Integer.parseInt(gidIndex));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--gid-index must be auto or 0..255: " + gidIndex);
            }
        }
        if (given("--device-name"))
        {
            context.deviceNames(deviceNames);
        }
        if (given("--topology-matrix"))
        {
            context.topologyMatrixFile(topologyMatrix);
        }
        if (given("--cluster-token-file"))
        {
            context.clusterToken(null).clusterTokenFile(clusterTokenFile.toAbsolutePath());
        }
        if (given("--metadata-token-file"))
        {
            context.metadataTokenFile(metadataTokenFile.toAbsolutePath());
        }
        if (insecureNoPeerAuth)
        {
            context.peerAuthentication(false);
        }
        if (given("--connections-per-peer"))
        {
            context.connectionsPerPeer(connectionsPerPeer);
        }
        if (given("--tcp-congestion"))
        {
            context.tcpCongestion(tcpCongestion);
        }
        if (given("--slice-size"))
        {
            context.sliceSize(sliceSize);
        }
        if (given("--transfer-timeout-ms"))
        {
            context.transferTimeoutMs(transferTimeoutMs);
        }
        if (given("--metadata-server"))
        {
            context.metadataServer(io.xferd.daemon.config.MetadataServer.parse(metadataServer).url());
        }
        if (given("--cluster-id"))
        {
            context.clusterId(clusterId);
        }
        if (given("--metadata-ttl-ms"))
        {
            context.metadataTtlMs(metadataTtlMs);
        }
        return context.conclude();
    }

    private boolean given(final String option)
    {
        return givenOptions != null ? givenOptions.contains(option) :
            command.commandLine().getParseResult().hasMatchedOption(option);
    }
}
