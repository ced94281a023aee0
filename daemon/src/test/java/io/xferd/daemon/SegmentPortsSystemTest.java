package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferFailedException;
import io.xferd.client.XferClient;
import io.xferd.client.XferException;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Mooncake sessions through the real control path: clients whose HELLO asks LISTEN get their own RPC port in
 * WELCOME (several engines on one daemon differ only by port), {@code OPEN_SEGMENT "127.0.0.1:port"} opens exactly
 * that engine's segment, here without the network and from another daemon through it; the port closes with its
 * client, handles to the gone segment fail, and the engine restarted (a new port) is reached again. Also: a client
 * with process memory whose process exits while a forked child holds its socket is cut off.
 */
@Tag("integration")
@Timeout(120)
class SegmentPortsSystemTest
{
    private static final int SIZE = 1 << 20;
    private static final int LENGTH = 200_000;

    private final Path directory = SystemTests.newDaemonDirectory();
    private final Path peerDirectory = SystemTests.newDaemonDirectory();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private XferDaemon daemon;
    private XferDaemon peer;

    @BeforeEach
    void launch()
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        peer = XferDaemon.launch(SystemTests.daemonContext(peerDirectory));
    }

    @AfterEach
    void tearDown()
    {
        closeables.add(daemon);
        closeables.add(peer);
        for (final AutoCloseable closeable : closeables)
        {
            try
            {
                if (closeable != null)
                {
                    closeable.close();
                }
            }
            catch (final Exception ignore)
            {
                // closing anyway
            }
        }
        SystemTests.deleteRecursively(directory);
        SystemTests.deleteRecursively(peerDirectory);
    }

    @Test
    void shouldGiveEachListeningEngineItsOwnPortNamingItsSegment()
    {
        final XferClient engineA = engine(directory, "engine-a", true);
        final XferClient engineB = engine(directory, "engine-b", true);
        final XferClient plain = engine(directory, "plain", false);
        final SharedBuffer memoryA = register(engineA);
        final SharedBuffer memoryB = register(engineB);

        assertThat(engineA.segmentRpcPort()).isPositive().isNotEqualTo(engineB.segmentRpcPort());
        assertThat(plain.segmentRpcPort()).isZero();
        final long peerConnections = SystemTests.counter(daemon, SystemCounter.PEER_CONNECTIONS_IN);
        assertThat(plain.openSegment(session(engineA))).as("locally").isEqualTo(engineA.ownSegment());
        assertThat(plain.openSegment(session(engineB))).isEqualTo(engineB.ownSegment());
        assertThat(SystemTests.counter(daemon, SystemCounter.PEER_CONNECTIONS_IN)).as("without the network")
            .isEqualTo(peerConnections);

        final XferClient remote = engine(peerDirectory, "remote", false);
        final SharedBuffer remoteMemory = register(remote);
        SystemTests.fill(remoteMemory.segment(), 1);
        remote.transferSyncWrite(remote.openSegment(session(engineB)), remoteMemory.address(), memoryB.address() + 5,
            LENGTH);
        assertThat(SystemTests.firstMismatch(memoryB.segment(), 5, SystemTests.randomBytes(1, SIZE), 0, LENGTH))
            .isEqualTo(-1);
        SystemTests.fill(memoryA.segment(), 2);
        remote.transferSyncRead(remote.openSegment(session(engineA)), remoteMemory.address(), memoryA.address() + 9,
            LENGTH);
        assertThat(SystemTests.firstMismatch(remoteMemory.segment(), 0, SystemTests.randomBytes(2, SIZE), 9, LENGTH))
            .isEqualTo(-1);
    }

    @Test
    void shouldCloseThePortWithItsClientAndReachTheRestartedEngineOnItsNewPort() throws Exception
    {
        final XferClient engine = engine(directory, "engine", true);
        register(engine);
        final String oldSession = session(engine);
        final XferClient remote = engine(peerDirectory, "remote", false);
        final SharedBuffer remoteMemory = register(remote);
        final long oldHandle = remote.openSegment(oldSession);

        final int oldPort = engine.segmentRpcPort();
        engine.close();
        SystemTests.awaitCondition(() -> refuses(oldPort), WAIT, () -> "port " + oldPort + " still accepts");
        assertThatThrownBy(() -> remote.openSegment(oldSession)).isInstanceOf(XferException.class);
        assertThatThrownBy(() -> remote.transferSyncWrite(oldHandle, remoteMemory.address(), 0x1000, 100))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.UNKNOWN_SEGMENT));

        final XferClient restarted = engine(directory, "engine", true);
        final SharedBuffer memory = register(restarted);
        SystemTests.fill(remoteMemory.segment(), 3);
        remote.transferSyncWrite(remote.openSegment(session(restarted)), remoteMemory.address(), memory.address(),
            LENGTH);
        assertThat(SystemTests.firstMismatch(memory.segment(), 0, SystemTests.randomBytes(3, SIZE), 0, LENGTH))
            .isEqualTo(-1);
    }

    @Test
    void shouldCutOffAClientWhoseProcessExitedWhileAForkedChildHoldsItsSocket() throws Exception
    {
        final Path script = Files.createTempFile("fork_holder", ".py");
        Files.copy(SegmentPortsSystemTest.class.getResourceAsStream("/fork_holder.py"), script,
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        final Process parent = new ProcessBuilder("python3", script.toString(),
            directory.resolve(io.xferd.ipc.CncFileDescriptor.SOCKET_FILE).toString(), "forker", "65536")
            .redirectErrorStream(true).start();
        long child = -1;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(parent.getInputStream(),
            StandardCharsets.UTF_8)))
        {
            assertThat(out.readLine()).startsWith("READY ");
            final String childLine = out.readLine();
            assertThat(childLine).startsWith("CHILD ");
            child = Long.parseLong(childLine.substring(6));
            assertThat(parent.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(ProcessHandle.of(child)).as("the forked child lives on, holding the socket").isPresent();

            final XferClient observer = engine(directory, "observer", false);
            SystemTests.awaitCondition(() -> !opens(observer, "forker"), WAIT,
                () -> "the segment of the exited process is still open");
        }
        finally
        {
            parent.destroyForcibly();
            if (child > 0)
            {
                ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
            }
            Files.deleteIfExists(script);
        }
    }

    private static boolean opens(final XferClient client, final String name)
    {
        try
        {
            client.openSegment(name);
            return true;
        }
        catch (final XferException ex)
        {
            return false;
        }
    }

    private static boolean refuses(final int port)
    {
        try (SocketChannel ignored = SocketChannel.open(new InetSocketAddress("127.0.0.1", port)))
        {
            return false;
        }
        catch (final ConnectException ex)
        {
            return true;
        }
        catch (final java.io.IOException ex)
        {
            return false;
        }
    }

    private static String session(final XferClient engine)
    {
        return "127.0.0.1:" + engine.segmentRpcPort();
    }

    private XferClient engine(final Path daemonDirectory, final String name, final boolean listen)
    {
        final XferClient client = XferClient.connect(SystemTests.clientContext(daemonDirectory, name).listen(listen));
        closeables.add(0, client);
        return client;
    }

    private static SharedBuffer register(final XferClient client)
    {
        final SharedBuffer buffer = client.allocateMemory(SIZE);
        client.registerMemory(buffer, "cpu:0");
        return buffer;
    }
}
