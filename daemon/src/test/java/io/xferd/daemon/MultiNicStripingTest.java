package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.daemon.transport.tcp.PeerPath;
import io.xferd.ipc.CncFileDescriptor;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two hosts joined by two rate-limited wires (two NICs each). One large request is striped over both NICs;
 * a NIC taken down mid-transfer is paused and its slices finish on the other, every byte verified; once the
 * NIC is back it carries slices again. The per-path counters in the daemon's cnc file show all of it.
 */
@Tag("integration")
@Timeout(180)
class MultiNicStripingTest
{
    private static final int SIZE = 128 * 1024 * 1024;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private NetworkNamespaces hosts;
    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private ChildProcess daemonA;
    private ChildProcess daemonB;
    private ChildProcess holder;

    @BeforeEach
    void setUp()
    {
        NetworkNamespaces.assumeAvailable();
        hosts = NetworkNamespaces.create();
        hosts.addSecondLink();
        hosts.rateLimit(400);
        daemonA = ChildProcess.startIn(hosts, hosts.namespaceA(), "daemon-a", XferdMain.class, "daemon",
            "--dir", dirA.toString(), "--rpc-address", hosts.addressA() + ":12001", "--transfer-timeout-ms", "1500",
            "--cluster-token-file", SystemTests.clusterTokenFile(dirA).toString(),
            "--device-name", hosts.vethA() + "," + hosts.vethA2());
        daemonB = ChildProcess.startIn(hosts, hosts.namespaceB(), "daemon-b", XferdMain.class, "daemon",
            "--dir", dirB.toString(), "--rpc-address", hosts.addressB() + ":12001",
            "--cluster-token-file", SystemTests.clusterTokenFile(dirA).toString(),
            "--device-name", hosts.vethB() + "," + hosts.vethB2());
        daemonA.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        daemonB.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
    }

    @AfterEach
    void tearDown()
    {
        for (final ChildProcess child : new ChildProcess[] {holder, daemonA, daemonB})
        {
            if (child != null)
            {
                child.close();
            }
        }
        if (hosts != null)
        {
            hosts.close();
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
    }

    private long startHolder(final long seed)
    {
        holder = ChildProcess.startIn(hosts, hosts.namespaceB(), "holder", ClientRoleMain.class,
            "hold", dirB.toString(), "decode", Integer.toString(SIZE), Long.toString(seed));
        return Long.parseLong(holder.awaitLine("READY ", WAIT).split(" ")[2]);
    }

    /** One WRITE of half the buffer and one READ of the other half: two large requests. */
    private ChildProcess startPushPull(final String name, final long targetAddress, final long seed,
        final long targetSeed)
    {
        return ChildProcess.startIn(hosts, hosts.namespaceA(), name, ClientRoleMain.class, "push-pull",
            dirA.toString(), name, hosts.addressB() + ":12001/decode", Long.toString(targetAddress),
            Integer.toString(SIZE), Long.toString(seed), Long.toString(targetSeed), Integer.toString(SIZE / 2));
    }

    @Test
    void shouldStripeOneLargeRequestOverBothNics()
    {
        final long target = startHolder(1);
        try (ChildProcess client = startPushPull("prefill", target, 2, 1))
        {
            assertThat(client.awaitExit(WAIT)).as(client.output()).isZero();
            assertThat(client.output()).contains("PUSHED 1 requests", "PULLED 1 requests", "VERIFIED");
        }
        final Map<String, Long> bytes = pathCounters(PeerPath.BYTES_TYPE_ID);
        assertThat(bytes).hasSize(2);
        // each NIC carried a real share of the 2 x 64 MiB, not a token slice
        assertThat(bytes.values()).allSatisfy(value -> assertThat(value).isGreaterThan(SIZE / 8));

        // and `xferd status` shows both NICs with their bytes, and the peer
        try (ChildProcess status = ChildProcess.start("status", XferdMain.class, "status", "--dir", dirA.toString(),
            "--json"))
        {
            assertThat(status.awaitExit(WAIT)).as(status.output()).isZero();
            final String json = status.output().substring(status.output().indexOf('{'));
            final com.fasterxml.jackson.databind.JsonNode root;
            try
            {
                root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
            }
            catch (final java.io.IOException ex)
            {
                throw new AssertionError(json, ex);
            }
            final Map<String, Long> nicBytes = new HashMap<>();
            root.path("nics").forEach(nic -> nicBytes.put(nic.path("name").asText(), nic.path("bytes").asLong()));
            assertThat(nicBytes.get(hosts.vethA())).isGreaterThan(SIZE / 8);
            assertThat(nicBytes.get(hosts.vethA2())).isGreaterThan(SIZE / 8);
            assertThat(root.path("peers").size()).isEqualTo(1);
            assertThat(root.path("peers").get(0).path("paths").asInt()).isEqualTo(2);
        }
    }

    @Test
    void shouldFinishOnTheOtherNicWhenOneGoesDownAndUseItAgainOnceItIsBack()
    {
        final long target = startHolder(3);
        try (ChildProcess client = startPushPull("prefill", target, 4, 3))
        {
            // wait until the second NIC carries bytes, then cut it mid-transfer
            SystemTests.awaitCondition(() -> bytesOn(hosts.vethA2()) > 0, WAIT, () -> "traffic on the second NIC");
            hosts.linkDown(hosts.vethA2());
            assertThat(client.awaitExit(WAIT)).as(() -> client.output() + daemonA.output()).isZero();
            assertThat(client.output()).contains("VERIFIED");
        }
        assertThat(counterOn(PeerPath.STATE_TYPE_ID, hosts.vethA2())).isEqualTo(PeerPath.PAUSED);
        assertThat(counterOn(PeerPath.FAILURES_TYPE_ID, hosts.vethA2())).isPositive();

        hosts.linkUp(hosts.vethA2());
        final long before = bytesOn(hosts.vethA2());
        boolean usedAgain = false;
        final long deadline = System.nanoTime() + WAIT.toNanos();
        for (int attempt = 0; !usedAgain && System.nanoTime() < deadline; attempt++)
        {
            try (ChildProcess client = startPushPull("prefill-" + attempt, target, 5, 3))
            {
                assertThat(client.awaitExit(WAIT)).as(client.output()).isZero();
            }
            usedAgain = bytesOn(hosts.vethA2()) > before;
        }
        assertThat(usedAgain).isTrue();
        assertThat(counterOn(PeerPath.STATE_TYPE_ID, hosts.vethA2())).isEqualTo(PeerPath.ACTIVE);
    }

    private long bytesOn(final String nic)
    {
        return counterOn(PeerPath.BYTES_TYPE_ID, nic);
    }

    private long counterOn(final int typeId, final String nic)
    {
        return pathCounters(typeId).entrySet().stream()
            .filter(entry -> entry.getKey().startsWith("path " + nic + " "))
            .mapToLong(Map.Entry::getValue).sum();
    }

    /** The per-path counters of daemon A, read from its cnc file as `xferd status` does. */
    private Map<String, Long> pathCounters(final int typeId)
    {
        final Map<String, Long> values = new HashMap<>();
        final MappedByteBuffer mapped = IoUtil.mapExistingFile(dirA.resolve(CncFileDescriptor.CNC_FILE).toFile(), "cnc");
        try
        {
            final UnsafeBuffer cnc = new UnsafeBuffer(mapped);
            final CountersReader reader = new CountersReader(
                CncFileDescriptor.countersMetadataBuffer(cnc), CncFileDescriptor.countersValuesBuffer(cnc));
            reader.forEach((value, id, label) ->
            {
                if (reader.getCounterTypeId(id) == typeId)
                {
                    values.put(label, value);
                }
            });
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
        return values;
    }
}
