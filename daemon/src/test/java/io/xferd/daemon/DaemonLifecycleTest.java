package io.xferd.daemon;

import io.xferd.client.DaemonGoneException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The daemon as its own process, the way it runs in production: clients learn promptly that it died (SIGKILL), a
 * restarted daemon takes over the directory the dead one left and clients reconnect to it, a second daemon for
 * a directory that is served refuses to start, and SIGTERM stops it cleanly.
 */
@Tag("integration")
@Timeout(120)
class DaemonLifecycleTest
{
    private static final int MIB = 1024 * 1024;
    private static final Duration GONE_WITHIN = Duration.ofSeconds(5);

    private Path directory;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void createDirectory()
    {
        directory = SystemTests.newDaemonDirectory();
    }

    @AfterEach
    void stopEverything() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        SystemTests.deleteRecursively(directory);
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        resources.add(resource);
        return resource;
    }

    private ChildProcess startDaemon(final String name)
    {
        final ChildProcess daemon = track(ChildProcess.start(name, XferdMain.class,
            "daemon", "--dir", directory.toString(), "--liveness-timeout-ms", "1000", "--rpc-address", "127.0.0.1:0",
            "--metrics-address", "127.0.0.1:0"));
        daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        return daemon;
    }

    private XferClient connect(final String name)
    {
        return track(XferClient.connect(SystemTests.clientContext(directory, name)));
    }

    @Test
    void shouldFailPendingRequestsWithDaemonGoneWhenTheDaemonIsKilled()
    {
        final ChildProcess daemon = startDaemon("daemon");
        final XferClient client = connect("prefill");
        final SharedBuffer buffer = client.allocateMemory(64 * MIB);
        client.registerMemory(buffer, "cpu:0");
        final long inFlight = client.allocateBatch(32);
        for (int i = 0; i < 32; i++)
        {
            client.submitTransfer(inFlight, TransferRequest.write(buffer.address() + (i % 16) * 2L * MIB,
                client.ownSegment(), buffer.address() + 32L * MIB + (i % 16) * 2L * MIB, 2 * MIB));
        }

        daemon.kill();
        final long neverServed = client.allocateBatch(1);
        client.submitTransfer(neverServed, TransferRequest.write(buffer.address(), client.ownSegment(),
            buffer.address() + 32L * MIB, MIB));

        final long start = System.nanoTime();
        assertThatThrownBy(() -> client.awaitBatch(neverServed, 60_000)).isInstanceOf(DaemonGoneException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(GONE_WITHIN);
        assertThat(client.isDaemonGone()).isTrue();
        final TaskStatus lost = client.getTransferStatus(neverServed, 0);
        assertThat(lost.state()).isEqualTo(TaskStatus.FAILED);
        assertThat(lost.status()).isEqualTo(TransferStatus.DAEMON_GONE);
        for (int i = 0; i < 32; i++)
        {
            final TaskStatus status = client.getTransferStatus(inFlight, i);
            assertThat(status.state()).as("task %d", i).isIn(TaskStatus.COMPLETED, TaskStatus.FAILED);
            if (status.state() == TaskStatus.FAILED)
            {
                assertThat(status.status()).isEqualTo(TransferStatus.DAEMON_GONE);
            }
        }
        assertThatThrownBy(() -> client.openSegment("prefill")).isInstanceOf(DaemonGoneException.class);
        assertThatThrownBy(() -> client.submitTransfer(client.allocateBatch(1),
            TransferRequest.write(buffer.address(), client.ownSegment(), buffer.address(), MIB)))
            .isInstanceOf(DaemonGoneException.class);
    }

    @Test
    void shouldFailTheNextCallOfAnIdleClientWithDaemonGoneWhenTheDaemonIsKilled()
    {
        final ChildProcess daemon = startDaemon("daemon");
        final XferClient idle = connect("idle");
        final XferClient polling = connect("polling");

        daemon.kill();

        final long start = System.nanoTime();
        assertThatThrownBy(() -> idle.openSegment("polling")).isInstanceOf(DaemonGoneException.class);
        SystemTests.awaitCondition(() -> polling.poll() == 0 && polling.isDaemonGone(), GONE_WITHIN,
            () -> "poll() notices that the daemon is gone");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(GONE_WITHIN);
        assertThatThrownBy(() -> polling.allocateBatch(1)).isInstanceOf(DaemonGoneException.class);
    }

    @Test
    void shouldLetClientsReconnectToADaemonRestartedInTheDirectoryTheKilledOneLeft()
    {
        final ChildProcess first = startDaemon("first daemon");
        final XferClient before = connect("decode");
        first.kill();
        assertThat(directory.resolve(CncFileDescriptor.CNC_FILE)).as("left by the killed daemon").exists();
        assertThatThrownBy(() -> before.openSegment("decode")).isInstanceOf(DaemonGoneException.class);

        final ChildProcess second = startDaemon("restarted daemon");
        assertThat(second.output()).contains("taking over");

        final XferClient after = connect("decode");
        final SharedBuffer buffer = after.allocateMemory(2 * MIB);
        SystemTests.fill(buffer.segment(), 8);
        after.registerMemory(buffer, "cpu:0");
        after.transferSyncWrite(after.ownSegment(), buffer.address(), buffer.address() + MIB, MIB);
        assertThat(SystemTests.firstMismatch(buffer.segment(), MIB, SystemTests.randomBytes(8, 2 * MIB), 0, MIB))
            .isEqualTo(-1);
    }

    @Test
    void shouldRefuseToStartASecondDaemonForADirectoryThatIsServed()
    {
        startDaemon("first daemon");

        final ChildProcess second = track(ChildProcess.start("second daemon", XferdMain.class,
            "daemon", "--dir", directory.toString(), "--rpc-address", "127.0.0.1:0",
            "--metrics-address", "127.0.0.1:0"));

        assertThat(second.awaitExit(WAIT)).as(second.output()).isEqualTo(2);
        assertThat(second.output()).contains("another xferd daemon");
        try (XferClient client = XferClient.connect(SystemTests.clientContext(directory, "still-served")))
        {
            assertThat(client.openSegment("still-served")).isEqualTo(client.ownSegment());
        }
    }

    @Test
    void shouldExitZeroAndRemoveItsFilesOnSigterm()
    {
        final ChildProcess daemon = startDaemon("daemon");
        final XferClient client = connect("decode");
        assertThat(directory.resolve(CncFileDescriptor.CNC_FILE)).exists();
        assertThat(directory.resolve(CncFileDescriptor.SOCKET_FILE)).exists();

        daemon.terminate();

        assertThat(daemon.awaitExit(WAIT)).as(daemon.output()).isZero();
        assertThat(Files.exists(directory.resolve(CncFileDescriptor.CNC_FILE))).isFalse();
        assertThat(Files.exists(directory.resolve(CncFileDescriptor.SOCKET_FILE))).isFalse();
        assertThatThrownBy(() -> client.openSegment("decode")).isInstanceOf(DaemonGoneException.class);
    }
}
