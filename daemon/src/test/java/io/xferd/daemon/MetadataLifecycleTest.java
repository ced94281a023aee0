package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.daemon.metadata.MetadataStore;
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
 * A daemon (a child process) and a real etcd through their bad days: the daemon killed, its key expires with
 * its lease; etcd killed and started again empty, the daemon publishes again; etcd down when the daemon starts,
 * the daemon says so, serves its local clients, and its segment is findable once etcd is up.
 */
@Tag("integration")
@Timeout(90)
class MetadataLifecycleTest
{
    private static final long TTL_MS = 2000;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private final String cluster = "life" + System.nanoTime();
    private final String key = "xferd/" + cluster + "/segments/holder";
    private Path etcdData;
    private int clientPort;
    private int peerPort;
    private MetadataServers etcd;
    private MetadataStore store;
    private ChildProcess daemonB;
    private XferDaemon daemonA;

    @BeforeEach
    void setUp() throws Exception
    {
        MetadataServers.assumeInstalled("etcd");
        etcdData = Files.createTempDirectory("xferd-etcd");
        clientPort = MetadataServers.freePort();
        peerPort = MetadataServers.freePort();
        etcd = MetadataServers.etcd(etcdData, clientPort, peerPort);
        store = etcd.client();
    }

    @AfterEach
    void tearDown() throws Exception
    {
        for (final AutoCloseable closeable : new AutoCloseable[] {daemonA, daemonB, store, etcd})
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

    private ChildProcess startDaemonB()
    {
        final ChildProcess daemon = ChildProcess.start("daemon-b", XferdMain.class, "daemon", "--dir",
            dirB.toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0",
            "--metadata-server", etcd.url(), "--cluster-id", cluster,
            "--cluster-token-file", SystemTests.clusterTokenFile(dirB).toString(),
            "--metadata-ttl-ms", Long.toString(TTL_MS));
        daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        return daemon;
    }

    private XferClient holder()
    {
        final XferClient holder = XferClient.connect(SystemTests.clientContext(dirB, "holder"));
        final SharedBuffer memory = holder.allocateMemory(64 * 1024);
        SystemTests.fill(memory.segment(), 3);
        holder.registerMemory(memory, "cpu:0");
        return holder;
    }

    private void awaitPublished()
    {
        SystemTests.awaitCondition(() -> present(), WAIT, () -> key + " not in etcd; daemon output:\n" +
            daemonB.output());
    }

    private boolean present()
    {
        try
        {
            final String json = store.get(key);
            return json != null && json.contains("\"length\":65536");
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
    }

    @Test
    void shouldLetAKilledDaemonsKeyExpireWithinTheTtl()
    {
        etcd.start();
        daemonB = startDaemonB();
        daemonB.awaitLine("reachable: publishing", WAIT);
        try (XferClient _ = holder())
        {
            awaitPublished();
            daemonB.kill();
            final long killedAt = System.nanoTime();
            SystemTests.awaitCondition(() -> store.get(key) == null, Duration.ofMillis(TTL_MS + 2500),
                () -> key + " outlived its daemon");
            final long goneAfterMs = (System.nanoTime() - killedAt) / 1_000_000;
            assertThat(goneAfterMs).as("expired %d ms after the kill", goneAfterMs).isLessThan(TTL_MS + 2500);
        }
        catch (final RuntimeException ex)
        {
            // the holder's daemon is gone: closing it may say so
            if (store.get(key) != null)
            {
                throw ex;
            }
        }
    }

    @Test
    void shouldPublishAgainAfterEtcdRestartsEmpty()
    {
        etcd.start();
        daemonB = startDaemonB();
        try (XferClient _ = holder())
        {
            awaitPublished();
            etcd.kill();
            daemonB.awaitLine("unreachable (", WAIT);
            SystemTests.deleteRecursively(etcdData);
            etcd.start();
            awaitPublished();
            daemonB.awaitLine("reachable again, re-published 1 segment(s)", WAIT);
        }
    }

    @Test
    void shouldRetryAnEtcdThatIsDownAtStartAndPublishOnceItIsUp()
    {
        daemonB = startDaemonB();
        daemonB.awaitLine("unreachable at start", WAIT);
        // the daemon serves its local clients meanwhile
        try (XferClient _ = holder())
        {
            etcd.start();
            awaitPublished();
            daemonB.awaitLine("reachable: publishing 1 segment(s)", WAIT);

            // and another daemon finds the segment by its name alone and reads it
            daemonA = XferDaemon.launch(SystemTests.daemonContext(dirA).metadataServer(etcd.url())
                .clusterId(cluster).metadataTtlMs(TTL_MS));
            try (XferClient reader = XferClient.connect(SystemTests.clientContext(dirA, "reader")))
            {
                final SharedBuffer into = reader.allocateMemory(64 * 1024);
                reader.registerMemory(into, "cpu:0");
                final long segment = reader.openSegment("holder");
                final String json = store.get(key);
                final long address = Long.parseLong(json.replaceAll(".*\"addr\":(-?[0-9]+).*", "$1"));
                reader.transferSyncRead(segment, into.address(), address, 64 * 1024);
                assertThat(SystemTests.firstMismatch(into.segment(), 0, SystemTests.randomBytes(3, 64 * 1024), 0,
                    64 * 1024)).isEqualTo(-1);
            }
        }
    }
}
