package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.ipc.SystemCounter;
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
 * Two hosts: two network namespaces joined by a veth pair, a daemon and a client in each. A client on host A
 * writes into and reads from the registered memory of a client on host B through the daemons' TCP transport;
 * a client asks for bytes outside what B registered; then the peer daemon dies, the link is cut, and a peer
 * without the cluster token knocks.
 */
@Tag("integration")
@Timeout(120)
class CrossHostTransferTest
{
    private static final int SIZE = 16 * 1024 * 1024;
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

    private String addressB()
    {
        return hosts.addressB() + ":12001";
    }

    private void startDaemons(final String... extra)
    {
        daemonA = startDaemon(hosts.namespaceA(), "daemon-a", dirA, hosts.addressA(), extra);
        daemonB = startDaemon(hosts.namespaceB(), "daemon-b", dirB, hosts.addressB(), extra);
        daemonA.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        daemonB.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
    }

    private ChildProcess startDaemon(
        final String namespace, final String name, final Path dir, final String address, final String... extra)
    {
        // both daemons share the test's token file, unless a test gives one of its own
        final boolean ownToken = java.util.Arrays.asList(extra).contains("--cluster-token-file");
        final java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("daemon", "--dir",
            dir.toString(), "--rpc-address", address + ":12001", "--transfer-timeout-ms", "2000",
            "--slice-size=262144"));
        if (!ownToken)
        {
            args.add("--cluster-token-file");
            args.add(SystemTests.clusterTokenFile(dirA).toString());
        }
        args.addAll(java.util.Arrays.asList(extra));
        return ChildProcess.startIn(hosts, namespace, name, XferdMain.class, args.toArray(new String[0]));
    }

    /** A client on host B holding SIZE bytes of seeded data; returns its address. */
    private long startHolder(final long seed)
    {
        holder = ChildProcess.startIn(hosts, hosts.namespaceB(), "holder", ClientRoleMain.class,
            "hold", dirB.toString(), "decode", Integer.toString(SIZE), Long.toString(seed));
        final String[] ready = holder.awaitLine("READY ", WAIT).split(" ");
        assertThat(ready[1]).isEqualTo(addressB() + "/decode");
        return Long.parseLong(ready[2]);
    }

    @Test
    void shouldWriteAndReadAcrossHostsEveryByteVerified()
    {
        startDaemons();
        final long targetAddress = startHolder(11);

        try (ChildProcess pusher = ChildProcess.startIn(hosts, hosts.namespaceA(), "pusher", ClientRoleMain.class,
            "push-pull", dirA.toString(), "prefill", addressB() + "/decode", Long.toString(targetAddress),
            Integer.toString(SIZE), "22", "11", Integer.toString(1 << 20)))
        {
            assertThat(pusher.awaitExit(WAIT)).as(pusher.output()).isZero();
            assertThat(pusher.output()).contains("VERIFIED");
        }
        // the pushed half landed on host B exactly
        holder.sendLine("VERIFY 22 " + SIZE + " 0 " + SIZE / 2);
        assertThat(holder.awaitLine("CHECKED", WAIT)).isEqualTo("CHECKED ok");
    }

    @Test
    void shouldRefuseRemoteAccessOutsideTheTargetsRegisteredMemoryAndKeepServing()
    {
        startDaemons();
        final long targetAddress = startHolder(13);
        try (ChildProcess prober = ChildProcess.startIn(hosts, hosts.namespaceA(), "prober", ClientRoleMain.class,
            "out-of-bounds", dirA.toString(), "prefill", addressB() + "/decode", Long.toString(targetAddress),
            Integer.toString(SIZE)))
        {
            assertThat(prober.awaitExit(WAIT)).as(prober.output()).isZero();
            assertThat(prober.output()).contains("REFUSED-ALL-AND-SERVED");
        }
        // host B counted every refusal; what it holds outside the 4 KiB written in bounds is untouched
        assertThat(SystemTests.cncCounter(dirB, SystemCounter.REMOTE_ACCESS_REFUSED)).isGreaterThanOrEqualTo(3);
        holder.sendLine("VERIFY 13 " + SIZE + " 4096 " + (SIZE - 4096));
        assertThat(holder.awaitLine("CHECKED", WAIT)).isEqualTo("CHECKED ok");
    }

    @Test
    void shouldFailInFlightRequestsWhenThePeerDaemonIsKilled()
    {
        startDaemons();
        final long targetAddress = startHolder(3);
        try (ChildProcess flooder = ChildProcess.startIn(hosts, hosts.namespaceA(), "flooder", ClientRoleMain.class,
            "flood", dirA.toString(), "prefill", addressB() + "/decode", Long.toString(targetAddress),
            Integer.toString(SIZE), Integer.toString(1 << 20)))
        {
            flooder.awaitLine("FLOODING", WAIT);
            daemonB.kill();
            // the flooder sees a typed failure and exits, it does not hang
            assertThat(flooder.awaitExit(WAIT)).as(flooder.output()).isEqualTo(1);
            assertThat(flooder.output()).containsAnyOf("TRANSPORT_ERROR", "TIMEOUT");
        }
    }

    @Test
    void shouldFailWithinTheTimeoutWhenTheLinkIsCutAndWorkAgainOnceItIsBack()
    {
        startDaemons();
        final long targetAddress = startHolder(5);
        // the flood writes only the first half, so the second half still holds the data the pull checks later
        try (ChildProcess flooder = ChildProcess.startIn(hosts, hosts.namespaceA(), "flooder", ClientRoleMain.class,
            "flood", dirA.toString(), "prefill", addressB() + "/decode", Long.toString(targetAddress),
            Integer.toString(SIZE / 2), Integer.toString(1 << 20)))
        {
            flooder.awaitLine("FLOODING", WAIT);
            hosts.linkDown();
            assertThat(flooder.awaitExit(WAIT)).as(flooder.output()).isEqualTo(1);
            assertThat(flooder.output()).containsAnyOf("TRANSPORT_ERROR", "TIMEOUT");
        }
        hosts.linkUp();
        // the pool reconnects: a new client's transfers go through again (bounded retries while the path un-pauses)
        boolean verified = false;
        final StringBuilder tries = new StringBuilder();
        final long deadline = System.nanoTime() + WAIT.toNanos();
        for (int attempt = 0; !verified && System.nanoTime() < deadline; attempt++)
        {
            try (ChildProcess pusher = ChildProcess.startIn(hosts, hosts.namespaceA(), "pusher-" + attempt,
                ClientRoleMain.class, "push-pull", dirA.toString(), "prefill-" + attempt, addressB() + "/decode",
                Long.toString(targetAddress), Integer.toString(SIZE), "6", "5", Integer.toString(1 << 20)))
            {
                verified = pusher.awaitExit(WAIT) == 0 && pusher.output().contains("VERIFIED");
                tries.append(pusher.output()).append('\n');
            }
        }
        assertThat(verified).as(tries.toString() + daemonA.output()).isTrue();
    }

    @Test
    void shouldRefuseAPeerWithTheWrongClusterToken() throws Exception
    {
        final Path tokenA = Files.writeString(dirA.resolveSibling(dirA.getFileName() + ".token"), "open-sesame-0123456789abcdef0123456789\n");
        final Path tokenB = Files.writeString(dirB.resolveSibling(dirB.getFileName() + ".token"), "something-else-0123456789abcdef01234567\n");
        try
        {
            daemonA = startDaemon(hosts.namespaceA(), "daemon-a", dirA, hosts.addressA(),
                "--cluster-token-file", tokenA.toString());
            daemonB = startDaemon(hosts.namespaceB(), "daemon-b", dirB, hosts.addressB(),
                "--cluster-token-file", tokenB.toString());
            daemonA.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
            daemonB.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
            final long targetAddress = startHolder(9);
            try (ChildProcess pusher = ChildProcess.startIn(hosts, hosts.namespaceA(), "pusher",
                ClientRoleMain.class, "push-pull", dirA.toString(), "prefill", addressB() + "/decode",
                Long.toString(targetAddress), Integer.toString(SIZE), "1", "9", Integer.toString(1 << 20)))
            {
                assertThat(pusher.awaitExit(WAIT)).isNotZero();
                assertThat(pusher.output()).contains("token");
            }
        }
        finally
        {
            Files.deleteIfExists(tokenA);
            Files.deleteIfExists(tokenB);
        }
    }
}
