package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two hosts (network namespaces) and an etcd on host A's address: a client on host A names the segment of a
 * client on host B by its plain name only, and writes and reads it, every byte verified.
 */
@Tag("integration")
@Timeout(90)
class CrossHostMetadataTest
{
    private static final int SIZE = 4 * 1024 * 1024;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private NetworkNamespaces hosts;
    private MetadataServers etcd;
    private Path etcdData;
    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private ChildProcess daemonA;
    private ChildProcess daemonB;
    private ChildProcess holder;

    @BeforeEach
    void setUp()
    {
        NetworkNamespaces.assumeAvailable();
        MetadataServers.assumeInstalled("etcd");
        hosts = NetworkNamespaces.create();
    }

    @AfterEach
    void tearDown() throws Exception
    {
        for (final AutoCloseable closeable : new AutoCloseable[] {holder, daemonA, daemonB, etcd, hosts})
        {
            if (closeable != null)
            {
                closeable.close();
            }
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
        SystemTests.deleteRecursively(etcdData);
    }

    private ChildProcess startDaemon(final String namespace, final String name, final Path dir, final String address)
    {
        final ChildProcess daemon = ChildProcess.startIn(hosts, namespace, name, XferdMain.class, "daemon",
            "--dir", dir.toString(), "--rpc-address", address + ":12001", "--metadata-server", etcd.url(),
            "--cluster-token-file", SystemTests.clusterTokenFile(dirA).toString(),
            "--cluster-id", "two-hosts", "--metadata-ttl-ms", "3000");
        daemon.awaitLine("reachable: publishing", WAIT);
        return daemon;
    }

    @Test
    void shouldFindASegmentOnAnotherHostByItsNameOnly() throws Exception
    {
        etcdData = Files.createTempDirectory("xferd-etcd");
        etcd = MetadataServers.etcd(etcdData, hosts.addressA(), 2379, 2380).startIn(hosts, hosts.namespaceA());
        daemonA = startDaemon(hosts.namespaceA(), "daemon-a", dirA, hosts.addressA());
        daemonB = startDaemon(hosts.namespaceB(), "daemon-b", dirB, hosts.addressB());

        holder = ChildProcess.startIn(hosts, hosts.namespaceB(), "holder", ClientRoleMain.class,
            "hold", dirB.toString(), "decode", Integer.toString(SIZE), "11");
        final long targetAddress = Long.parseLong(holder.awaitLine("READY ", WAIT).split(" ")[2]);

        // "decode", not host:port/decode: daemon A finds it in etcd (the holder's key went in as it registered)
        try (ChildProcess pusher = ChildProcess.startIn(hosts, hosts.namespaceA(), "pusher", ClientRoleMain.class,
            "push-pull", dirA.toString(), "prefill", "decode", Long.toString(targetAddress),
            Integer.toString(SIZE), "22", "11", Integer.toString(1 << 20)))
        {
            assertThat(pusher.awaitExit(WAIT)).as(pusher.output() + "\n" + daemonA.output()).isZero();
            assertThat(pusher.output()).contains("VERIFIED");
        }
        holder.sendLine("VERIFY 22 " + SIZE + " 0 " + SIZE / 2);
        assertThat(holder.awaitLine("CHECKED", WAIT)).isEqualTo("CHECKED ok");
    }
}
