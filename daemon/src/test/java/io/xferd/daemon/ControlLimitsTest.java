package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.daemon.statusmap.StatusMapFile;
import io.xferd.daemon.statusmap.StatusMapReader;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What one client may hold in the daemon is bounded, and going past a bound is a typed refusal of that request
 * (LIMIT_REACHED), never a disconnect nor anything another client notices.
 */
@Tag("integration")
@Timeout(120)
class ControlLimitsTest
{
    private static final int KIB = 1024;

    private final Path directory = SystemTests.newDaemonDirectory();
    private XferDaemon daemon;

    @AfterEach
    void stopDaemon()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldRefuseARegionBeyondTheClientsLimitAndKeepTheRegistryEntryPerRegion()
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).maxRegionsPerClient(4));
        // the registry opens after serving, on its own thread; from then on every change is in it when answered
        SystemTests.awaitCondition(daemon::isWritingRegistry, WAIT, () -> "the registry did not open");
        try (XferClient greedy = XferClient.connect(SystemTests.clientContext(directory, "greedy"));
            XferClient other = XferClient.connect(SystemTests.clientContext(directory, "other")))
        {
            final SharedBuffer buffer = greedy.allocateMemory(8 * 4 * KIB);
            for (int i = 0; i < 4; i++)
            {
                greedy.registerMemory(buffer.address() + i * 4L * KIB, 4 * KIB, "cpu:0");
            }
            assertThatThrownBy(() -> greedy.registerMemory(buffer.address() + 4 * 4L * KIB, 4 * KIB, "cpu:0"))
                .isInstanceOfSatisfying(ControlException.class,
                    ex -> assertThat(ControlError.name(ex.code())).isEqualTo("LIMIT_REACHED"));
            assertThat(registryRegions()).as("one registry entry per region").hasSize(4);

            greedy.unregisterMemory(buffer.address() + 4 * KIB);
            assertThat(registryRegions()).hasSize(3);
            greedy.registerMemory(buffer.address() + 4 * 4L * KIB, 4 * KIB, "cpu:0");
            assertThat(registryRegions()).hasSize(4);
            assertThat(StatusMapReader.read(directory).get(StatusMapFile.CLIENT_PREFIX + "0").path("registered_bytes")
                .asLong()).isEqualTo(16 * KIB);

            final SharedBuffer own = other.allocateMemory(4 * KIB);
            other.registerMemory(own, "cpu:0");
            other.transferSyncWrite(greedy.openSegment("greedy"), own.address(), buffer.address(), 4 * KIB);
            greedy.transferSyncRead(greedy.ownSegment(), buffer.address() + 4 * 4L * KIB, buffer.address(), 4 * KIB);
        }
    }

    @Test
    void shouldRefuseControlRequestsBeyondTheClientsPendingLimitAndAnswerTheOthersLater() throws IOException
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).maxPendingControlPerClient(2)
            .transferTimeoutMs(1000));
        // a "peer" that accepts and never says a word: opening a segment there waits for the transfer timeout
        try (ServerSocket silent = new ServerSocket())
        {
            silent.bind(new InetSocketAddress("127.0.0.1", 0));
            final List<Socket> accepted = new ArrayList<>();
            final Thread acceptor = Thread.ofPlatform().daemon().start(() ->
            {
                try
                {
                    while (true)
                    {
                        accepted.add(silent.accept());
                    }
                }
                catch (final IOException closed)
                {
                    // test over
                }
            });
            final String name = "127.0.0.1:" + silent.getLocalPort() + "/nobody";
            try (RawControlSession client = RawControlSession.hello(directory, "opener", WAIT))
            {
                for (int i = 1; i <= 3; i++)
                {
                    final long correlationId = i;
                    client.send(frame -> frame.begin(ControlMessages.OPEN_SEGMENT)
                        .putLong(ControlMessages.CORRELATION_ID, correlationId)
                        .putString(ControlMessages.OPEN_SEGMENT_NAME, name), WAIT);
                }
                final ControlFrame first = client.answer(WAIT);
                assertThat(first.getLong(ControlMessages.CORRELATION_ID)).as("the third, at once").isEqualTo(3);
                assertThat(ControlError.name(first.getInt(ControlMessages.ERROR_CODE))).isEqualTo("LIMIT_REACHED");
                final List<Long> later = new ArrayList<>();
                for (int i = 0; i < 2; i++)
                {
                    final ControlFrame answer = client.answer(WAIT);
                    later.add(answer.getLong(ControlMessages.CORRELATION_ID));
                    assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE))).isEqualTo("UNKNOWN_SEGMENT");
                }
                assertThat(later).containsExactlyInAnyOrder(1L, 2L);

                // answered, so counted off: room again
                client.send(frame -> frame.begin(ControlMessages.OPEN_SEGMENT)
                    .putLong(ControlMessages.CORRELATION_ID, 4)
                    .putString(ControlMessages.OPEN_SEGMENT_NAME, "opener"), WAIT);
                final ControlFrame own = client.answer(WAIT);
                assertThat(own.type()).isEqualTo(ControlMessages.OK);
                assertThat(own.getLong(ControlMessages.OK_VALUE)).isEqualTo(client.segmentHandle());
            }
            finally
            {
                silent.close();
                acceptor.join(5000);
                for (final Socket socket : accepted)
                {
                    socket.close();
                }
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void shouldKeepServingThroughAFloodOfConnectionsThatNeverSayHello()
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).maxPendingConnections(16).helloTimeoutMs(300));
        final List<RawControlSession> silent = new ArrayList<>();
        try
        {
            for (int i = 0; i < 300; i++)
            {
                silent.add(RawControlSession.connect(directory));
            }
            try (XferClient client = XferClient.connect(SystemTests.clientContext(directory, "served")))
            {
                final SharedBuffer buffer = client.allocateMemory(8 * KIB);
                SystemTests.fill(buffer.segment().asSlice(0, 4 * KIB), 5);
                client.registerMemory(buffer, "cpu:0");
                client.transferSyncWrite(client.ownSegment(), buffer.address(), buffer.address() + 4 * KIB, 4 * KIB);
                assertThat(SystemTests.firstMismatch(buffer.segment(), 4 * KIB, SystemTests.randomBytes(5, 4 * KIB), 0,
                    4 * KIB)).isEqualTo(-1);
            }
            for (final RawControlSession connection : silent)
            {
                assertThat(connection.awaitClosedByDaemon(WAIT)).as("closed: over the cap or past the HELLO deadline")
                    .isTrue();
            }
        }
        finally
        {
            silent.forEach(RawControlSession::close);
        }
        try (XferClient late = XferClient.connect(SystemTests.clientContext(directory, "late")))
        {
            assertThat(late.isDaemonGone()).isFalse();
        }
    }

    private List<String> registryRegions()
    {
        final Map<String, ?> entries = StatusMapReader.read(directory);
        return entries.keySet().stream().filter(key -> key.startsWith(StatusMapFile.REGION_PREFIX)).toList();
    }
}
