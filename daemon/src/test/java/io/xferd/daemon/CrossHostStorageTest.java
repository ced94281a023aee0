package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A storage region from another host: two network namespaces joined by a veth pair, a daemon in each. A client on
 * host B registers a file of seeded data (on the machine's disk); a client on host A WRITEs the first half of its
 * memory into the file and READs the file's second half back, every byte checked on both sides; and a file truncated
 * under its region fails a peer's requests typed while the same connection serves the rest.
 */
@Tag("integration")
@Timeout(180)
class CrossHostStorageTest
{
    private static final int SIZE = 16 * 1024 * 1024;
    private static final Duration WAIT = Duration.ofSeconds(90);

    private NetworkNamespaces hosts;
    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private Path files;
    private ChildProcess daemonA;
    private ChildProcess daemonB;
    private ChildProcess holder;

    @BeforeEach
    void setUp() throws IOException
    {
        NetworkNamespaces.assumeAvailable();
        hosts = NetworkNamespaces.create();
        files = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "xferd-crosshost-files");
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
        if (files != null)
        {
            SystemTests.deleteRecursively(files);
        }
    }

    @Test
    void shouldWriteIntoAndReadFromAFileOnAnotherHostEveryByteVerified()
    {
        daemonA = startDaemon(hosts.namespaceA(), "daemon-a", dirA, hosts.addressA());
        daemonB = startDaemon(hosts.namespaceB(), "daemon-b", dirB, hosts.addressB());
        daemonA.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        daemonB.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        final Path file = files.resolve("kv-cache.bin");
        holder = ChildProcess.startIn(hosts, hosts.namespaceB(), "file-holder", ClientRoleMain.class,
            "hold-file", dirB.toString(), "decode", Integer.toString(SIZE), "31", file.toString());
        final String[] ready = holder.awaitLine("READY ", WAIT).split(" ");
        final long address = Long.parseLong(ready[2]);

        try (ChildProcess pusher = ChildProcess.startIn(hosts, hosts.namespaceA(), "pusher", ClientRoleMain.class,
            "push-pull", dirA.toString(), "prefill", hosts.addressB() + ":12001/decode", Long.toString(address),
            Integer.toString(SIZE), "32", "31", Integer.toString(1 << 20)))
        {
            assertThat(pusher.awaitExit(WAIT)).as(pusher.output()).isZero();
            assertThat(pusher.output()).contains("VERIFIED");
        }
        holder.sendLine("VERIFY 32 " + SIZE + " 0 " + SIZE / 2);
        assertThat(holder.awaitLine("CHECKED", WAIT)).isEqualTo("CHECKED ok");
    }

    /**
     * One peer connection (A keeps one per peer) carries, in one batch, WRITEs into a sync file on B (whole blocks
     * through B's storage stage, and pieces off the blocks), READs of it, and a READ and a WRITE of a second file
     * that was truncated under its region: those two fail with STORAGE_TRUNCATED at A's client, every other request
     * completes with its bytes verified (in memory on A, in the file on B), and the same connection then serves a
     * READ of what was written.
     */
    @Test
    void shouldFailRequestsToATruncatedFileTypedWhileTheSameConnectionServesTheOthers() throws IOException
    {
        daemonA = startDaemon(hosts.namespaceA(), "daemon-a", dirA, hosts.addressA(), "--connections-per-peer", "1");
        daemonB = startDaemon(hosts.namespaceB(), "daemon-b", dirB, hosts.addressB());
        daemonA.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        daemonB.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        final Path good = files.resolve("good.bin");
        final Path bad = files.resolve("bad.bin");
        holder = ChildProcess.startIn(hosts, hosts.namespaceB(), "files-holder", ClientRoleMain.class,
            "hold-files", dirB.toString(), "decode", Integer.toString(SIZE), "31", good.toString(), bad.toString());
        final String[] ready = holder.awaitLine("READY ", WAIT).split(" ");
        try (RandomAccessFile file = new RandomAccessFile(bad.toFile(), "rw"))
        {
            file.setLength(SIZE / 2);
        }

        try (ChildProcess mixed = ChildProcess.startIn(hosts, hosts.namespaceA(), "mixed", ClientRoleMain.class,
            "mixed-file", dirA.toString(), "prefill", hosts.addressB() + ":12001/decode", ready[2], ready[3],
            Integer.toString(SIZE), "32", "31"))
        {
            assertThat(mixed.awaitExit(WAIT)).as(mixed.output()).isZero();
            assertThat(mixed.output()).contains("MIXED-VERIFIED");
        }
        holder.sendLine("VERIFY 32 " + SIZE + " 0 " + SIZE / 2);
        assertThat(holder.awaitLine("CHECKED", WAIT)).isEqualTo("CHECKED ok");
        assertThat(Files.size(bad)).as("not regrown").isEqualTo(SIZE / 2);
    }

    private ChildProcess startDaemon(
        final String namespace, final String name, final Path dir, final String address, final String... more)
    {
        final List<String> args = new ArrayList<>(List.of("daemon", "--dir", dir.toString(), "--rpc-address",
            address + ":12001", "--transfer-timeout-ms", "10000", "--slice-size=262144", "--cluster-token-file",
            SystemTests.clusterTokenFile(dirA).toString()));
        args.addAll(List.of(more));
        return ChildProcess.startIn(hosts, namespace, name, XferdMain.class, args.toArray(new String[0]));
    }
}
