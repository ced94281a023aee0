package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.Notification;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two daemons on loopback (the network-namespace tests put them on two "hosts"): a client of one reads and
 * writes the registered memory of a client of the other through the daemons' TCP transport.
 */
@Tag("integration")
@Timeout(60)
class PeerTransferTest
{
    private static final int SIZE = 8 * 1024 * 1024;
    private static final String SESAME = "open-sesame-0123456789abcdef0123456789";

    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private XferDaemon daemonA;
    private XferDaemon daemonB;

    @AfterEach
    void tearDown()
    {
        if (daemonA != null)
        {
            daemonA.close();
        }
        if (daemonB != null)
        {
            daemonB.close();
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
    }

    private void startDaemons(final String tokenA, final String tokenB)
    {
        daemonA = XferDaemon.launch(withToken(SystemTests.daemonContext(dirA), tokenA).sliceSize(256 * 1024));
        daemonB = XferDaemon.launch(withToken(SystemTests.daemonContext(dirB), tokenB).sliceSize(256 * 1024));
    }

    /** {@code token} when given, else the tests' shared one. */
    private static DaemonContext withToken(final DaemonContext context, final String token)
    {
        return token == null ? context : context.clusterToken(token);
    }

    @Test
    void shouldWriteAndReadAnotherDaemonsClientMemoryEveryByteVerified()
    {
        startDaemons(null, null);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(SIZE);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(SIZE);
            SystemTests.fill(source.segment(), 42);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            // push: 8 MiB in 1 MiB requests, each cut into 256 KiB slices over two connections
            final long batch = prefill.allocateBatch(8);
            for (int i = 0; i < 8; i++)
            {
                prefill.submitTransfer(batch, TransferRequest.write(source.address() + i * (1L << 20), segment,
                    target.address() + i * (1L << 20), 1 << 20));
            }
            assertThat(prefill.awaitBatch(batch, 20_000)).isTrue();
            prefill.freeBatch(batch);
            assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(42, SIZE), 0, SIZE))
                .isEqualTo(-1);

            // pull: read it all back into a second buffer
            final SharedBuffer readBack = prefill.allocateMemory(SIZE);
            prefill.registerMemory(readBack, "cpu:0");
            prefill.transferSyncRead(segment, readBack.address(), target.address(), SIZE);
            assertThat(SystemTests.firstMismatch(readBack.segment(), 0, SystemTests.randomBytes(42, SIZE), 0, SIZE))
                .isEqualTo(-1);

            assertThat(SystemTests.counter(daemonA, SystemCounter.REMOTE_BYTES_SENT)).isEqualTo(SIZE);
            assertPathMetrics(daemonA, daemonB.rpcAddress());
            assertThat(SystemTests.counter(daemonA, SystemCounter.REMOTE_BYTES_RECEIVED)).isEqualTo(SIZE);
            assertThat(SystemTests.counter(daemonB, SystemCounter.REMOTE_BYTES_RECEIVED)).isEqualTo(SIZE);
        }
    }

    @Test
    void shouldDeliverANotificationAfterTheRemoteWriteLanded()
    {
        startDaemons(null, null);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(1 << 20);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(1 << 20);
            SystemTests.fill(source.segment(), 7);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            final long batch = prefill.allocateBatch(1);
            prefill.submitTransfer(batch, TransferRequest.write(source.address(), segment, target.address(), 1 << 20)
                .notify("layer 0".getBytes(StandardCharsets.UTF_8)).traceId(99));
            assertThat(prefill.awaitBatch(batch, 20_000)).isTrue();

            // the notification is sent only after every slice was acknowledged
            List<Notification> notes = decode.getNotifies();
            for (int i = 0; i < 2000 && notes.isEmpty(); i++)
            {
                Thread.onSpinWait();
                notes = decode.getNotifies();
            }
            assertThat(notes).hasSize(1);
            assertThat(notes.get(0).messageAsString()).isEqualTo("layer 0");
            assertThat(notes.get(0).source()).isEqualTo(daemonA.rpcAddress() + "/prefill");
            assertThat(notes.get(0).traceId()).isEqualTo(99);
            assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(7, 1 << 20), 0, 1 << 20))
                .isEqualTo(-1);
        }
    }

    @Test
    void shouldDeliverNoNotificationForAWriteTheTargetRefused()
    {
        startDaemons(null, null);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(1 << 20);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(1 << 20);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            // one byte past the region: refused, so "refused" must never be announced
            final long refused = prefill.allocateBatch(1);
            prefill.submitTransfer(refused, TransferRequest.write(source.address(), segment, target.address() + 1,
                1 << 20).notify("refused".getBytes(StandardCharsets.UTF_8)).traceId(1));
            assertThat(prefill.awaitBatch(refused, 20_000)).isFalse();
            assertThat(prefill.getTransferStatus(refused, 0).status())
                .isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);

            // a good write after it, on the same connection, announces itself: the first notification is its
            final long landed = prefill.allocateBatch(1);
            prefill.submitTransfer(landed, TransferRequest.write(source.address(), segment, target.address(), 4096)
                .notify("landed".getBytes(StandardCharsets.UTF_8)).traceId(2));
            assertThat(prefill.awaitBatch(landed, 20_000)).isTrue();
            List<Notification> notes = decode.getNotifies();
            for (int i = 0; i < 2000 && notes.isEmpty(); i++)
            {
                Thread.onSpinWait();
                notes = decode.getNotifies();
            }
            assertThat(notes).extracting(Notification::messageAsString).containsExactly("landed");
        }
    }

    @Test
    void shouldRefuseRemoteAccessOutsideTheTargetsRegisteredRegions()
    {
        startDaemons(null, null);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(1 << 20);
            SystemTests.fill(target.segment(), 31);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(2 << 20);
            SystemTests.fill(source.segment(), 32);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            final long batch = prefill.allocateBatch(3);
            // one byte past the end, one before the start, and twice the region's size
            prefill.submitTransfer(batch, TransferRequest.write(source.address(), segment, target.address() + 1, 1 << 20));
            prefill.submitTransfer(batch, TransferRequest.read(source.address(), segment, target.address() - 1, 4096));
            prefill.submitTransfer(batch, TransferRequest.write(source.address(), segment, target.address(), 2 << 20));
            assertThat(prefill.awaitBatch(batch, 20_000)).isFalse();
            for (int task = 0; task < 3; task++)
            {
                final TaskStatus status = prefill.getTransferStatus(batch, task);
                assertThat(status.state()).isEqualTo(TaskStatus.FAILED);
                assertThat(status.status()).isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);
                assertThat(status.transferredBytes()).isZero();
            }
            assertThat(SystemTests.counter(daemonB, SystemCounter.REMOTE_ACCESS_REFUSED)).isGreaterThanOrEqualTo(3);
            // no slice of a request that reaches past the region landed, not even those inside it
            assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(31, 1 << 20), 0, 1 << 20))
                .isEqualTo(-1);

            // and the connection is still in step: a good transfer after the refusals succeeds
            prefill.transferSyncWrite(segment, source.address(), target.address(), 1 << 20);
        }
    }

    @Test
    void shouldRefuseASliceTooLongForOneFrameAndKeepServingTheConnection() throws Exception
    {
        startDaemons(null, null);
        // the length is refused before any region is looked up (a region big enough for the slice would have
        // been borrowed and never released before the fix; registering one costs gigabytes of populated pages)
        final long regionLength = 1 << 20;
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            io.xferd.daemon.transport.tcp.RawPeer peer = io.xferd.daemon.transport.tcp.RawPeer.connect(daemonB.rpcAddress(), SystemTests.CLUSTER_TOKEN))
        {
            final SharedBuffer target = decode.allocateMemory(regionLength);
            decode.registerMemory(target, "cpu:0");
            final long handle = peer.handle("decode");

            // a slice of 2 GiB cannot be framed (int lengths) nor viewed as one ByteBuffer: refused, not a crash
            peer.read(1, handle, target.address(), 1L << 31);
            assertThat(peer.ack()).containsExactly(1, TransferStatus.INVALID_LENGTH, 0);

            // the connection is still in step and serves the next slice
            peer.read(2, handle, target.address(), 4096);
            assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 4096);
        }
    }

    @Test
    void shouldRefuseAPeerThatCannotProveTheClusterToken()
    {
        startDaemons(SESAME, "something-else-0123456789abcdef0123456789");
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(4096);
            decode.registerMemory(target, "cpu:0");

            assertThatThrownBy(() -> prefill.openSegment(daemonB.rpcAddress() + "/decode"))
                .isInstanceOf(ControlException.class)
                .hasMessageContaining("token");
        }
    }

    @Test
    void shouldCreateARandomTokenFileAtFirstStartAndAdmitNoPeerWithoutIt() throws Exception
    {
        // no token configured: the daemon makes <dir>/cluster.token (256 random bits, 0600) and requires it
        daemonB = XferDaemon.launch(new DaemonContext().directory(dirB).rpcAddress("127.0.0.1:0"));
        final Path tokenFile = dirB.resolve("cluster.token");
        final String token = java.nio.file.Files.readString(tokenFile).trim();
        assertThat(token).matches("[0-9a-f]{64}");
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(tokenFile))).isEqualTo("rw-------");
        assertThat(daemonB.context().describe()).containsEntry("peer_auth", "token")
            .containsEntry("cluster_token", "file " + tokenFile);

        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
        {
            decode.registerMemory(decode.allocateMemory(4096), "cpu:0");

            // a peer without a token, one with another token, one sending a zero proof: none gets anything
            assertThatThrownBy(() -> io.xferd.daemon.transport.tcp.RawPeer.connectWithoutAuthentication(daemonB.rpcAddress()))
                .hasMessageContaining("requires peer authentication");
            assertThatThrownBy(() -> io.xferd.daemon.transport.tcp.RawPeer.connect(daemonB.rpcAddress(), SystemTests.CLUSTER_TOKEN))
                .hasMessageContaining("another cluster token");
            assertThat(io.xferd.daemon.transport.tcp.RawPeer.zeroProofThenAsk(daemonB.rpcAddress(), "decode")).isEqualTo("closed");

            // the token file's holder is admitted
            try (io.xferd.daemon.transport.tcp.RawPeer peer = io.xferd.daemon.transport.tcp.RawPeer.connect(daemonB.rpcAddress(), token))
            {
                assertThat(peer.handle("decode")).isNotZero();
            }
        }
        daemonB.close();
        // and a restart keeps the token
        daemonB = XferDaemon.launch(new DaemonContext().directory(dirB).rpcAddress("127.0.0.1:0"));
        assertThat(java.nio.file.Files.readString(tokenFile).trim()).isEqualTo(token);
    }

    @Test
    void shouldServeUnauthenticatedPeersOnlyWhenToldToAndSaySo()
    {
        daemonA = XferDaemon.launch(new DaemonContext().directory(dirA).rpcAddress("127.0.0.1:0")
            .peerAuthentication(false));
        daemonB = XferDaemon.launch(new DaemonContext().directory(dirB).rpcAddress("127.0.0.1:0")
            .peerAuthentication(false));
        assertThat((String)daemonB.context().describe().get("peer_auth")).startsWith("none (INSECURE");
        assertThat(java.nio.file.Files.exists(dirB.resolve("cluster.token"))).isFalse();
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(4096);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(4096);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");
            prefill.transferSyncWrite(segment, source.address(), target.address(), 4096);

            // a peer with a token and one without do not talk to each other
            assertThatThrownBy(() -> io.xferd.daemon.transport.tcp.RawPeer.connect(daemonB.rpcAddress(), SystemTests.CLUSTER_TOKEN))
                .hasMessageContaining("runs without peer authentication");
        }
    }

    @Test
    void shouldCloseAConnectionWhoseFrameTagIsWrongAndAnswerNothing() throws Exception
    {
        startDaemons(null, null);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            io.xferd.daemon.transport.tcp.RawPeer peer = io.xferd.daemon.transport.tcp.RawPeer.connect(daemonB.rpcAddress(),
                SystemTests.CLUSTER_TOKEN))
        {
            final SharedBuffer target = decode.allocateMemory(4096);
            decode.registerMemory(target, "cpu:0");
            final long handle = peer.handle("decode");
            // a READ whose fields were altered after they were tagged (as by someone on the path)
            peer.readWithBadTag(1, handle, target.address(), 4096);
            assertThatThrownBy(peer::ack).isInstanceOf(java.io.EOFException.class);
        }
    }

    @Test
    void shouldAdmitAPeerWithTheSameClusterToken()
    {
        startDaemons(SESAME, SESAME);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(4096);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(4096);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");
            prefill.transferSyncWrite(segment, source.address(), target.address(), 4096);
        }
    }

    @Test
    void shouldFailRequestsWithATypedErrorWhenThePeerDaemonGoesAway()
    {
        startDaemons(null, null);
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(SIZE);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(SIZE);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");
            prefill.transferSyncWrite(segment, source.address(), target.address(), SIZE);

            daemonB.close();
            daemonB = null;

            final long batch = prefill.allocateBatch(4);
            for (int i = 0; i < 4; i++)
            {
                prefill.submitTransfer(batch, new TransferRequest().set(i % 2 == 0 ? Opcode.WRITE : Opcode.READ,
                    source.address(), segment, target.address(), SIZE));
            }
            assertThat(prefill.awaitBatch(batch, 20_000)).isFalse();
            for (int task = 0; task < 4; task++)
            {
                final TaskStatus status = prefill.getTransferStatus(batch, task);
                assertThat(status.state()).isEqualTo(TaskStatus.FAILED);
                assertThat(status.status()).isIn(TransferStatus.TRANSPORT_ERROR, TransferStatus.TIMEOUT);
            }
        }
    }

    @Test
    void shouldNameTheMissingSegmentWhenThePeerHasNone()
    {
        startDaemons(null, null);
        try (XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            assertThatThrownBy(() -> prefill.openSegment(daemonB.rpcAddress() + "/nobody"))
                .isInstanceOf(ControlException.class)
                .hasMessageContaining("no segment named nobody");
            assertThatThrownBy(() -> prefill.openSegment("127.0.0.1:1/decode"))
                .isInstanceOf(ControlException.class)
                .hasMessageContaining("127.0.0.1:1");
        }
    }

    @Test
    void shouldDropAStaleHandleAfterThePeerRestartedAndWorkOnceReopened()
    {
        startDaemons(null, null);
        final String peerAddress = daemonB.rpcAddress();
        final int port = Integer.parseInt(peerAddress.substring(peerAddress.lastIndexOf(':') + 1));
        try (XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer source = prefill.allocateMemory(4096);
            prefill.registerMemory(source, "cpu:0");
            long segment;
            try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
            {
                final SharedBuffer target = decode.allocateMemory(4096);
                decode.registerMemory(target, "cpu:0");
                segment = prefill.openSegment(peerAddress + "/decode");
                prefill.transferSyncWrite(segment, source.address(), target.address(), 4096);
            }

            // the peer restarts on the same address: a new epoch
            daemonB.close();
            daemonB = XferDaemon.launch(SystemTests.daemonContext(dirB).rpcAddress("127.0.0.1:" + port));
            try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
            {
                final SharedBuffer target = decode.allocateMemory(4096);
                decode.registerMemory(target, "cpu:0");

                final long batch = prefill.allocateBatch(1);
                prefill.submitTransfer(batch, TransferRequest.write(source.address(), segment, target.address(), 4096));
                assertThat(prefill.awaitBatch(batch, 20_000)).isFalse();
                assertThat(prefill.getTransferStatus(batch, 0).status())
                    .isIn(TransferStatus.UNKNOWN_SEGMENT, TransferStatus.TRANSPORT_ERROR);
                prefill.freeBatch(batch);

                // a second try may be the one that reconnects; a reopened segment works
                final long reopened = prefill.openSegment(peerAddress + "/decode");
                assertThat(reopened).isNotEqualTo(segment);
                SystemTests.awaitCondition(() ->
                {
                    try
                    {
                        prefill.transferSyncWrite(reopened, source.address(), target.address(), 4096);
                        return true;
                    }
                    catch (final io.xferd.client.TransferFailedException ex)
                    {
                        return false;
                    }
                }, SystemTests.WAIT, () -> "write through the reopened segment");
            }
        }
    }

    @Test
    void shouldReadAndWriteManyLargeRequestsInFlightAtOnce()
    {
        daemonA = XferDaemon.launch(SystemTests.daemonContext(dirA));
        daemonB = XferDaemon.launch(SystemTests.daemonContext(dirB));
        final int size = 64 << 20;
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(size);
            SystemTests.fill(target.segment(), 5);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer local = prefill.allocateMemory(size);
            prefill.registerMemory(local, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            // 4 batches of 16 x 1 MiB READs in flight, two slices each, over both pooled connections
            for (int round = 0; round < 3; round++)
            {
                final long[] batches = new long[4];
                for (int b = 0; b < 4; b++)
                {
                    batches[b] = prefill.allocateBatch(16);
                    for (int i = 0; i < 16; i++)
                    {
                        final long offset = (b * 16L + i) << 20;
                        prefill.submitTransfer(batches[b], TransferRequest.read(local.address() + offset, segment,
                            target.address() + offset, 1 << 20));
                    }
                }
                for (final long batch : batches)
                {
                    assertThat(prefill.awaitBatch(batch, 20_000)).isTrue();
                    prefill.freeBatch(batch);
                }
                assertThat(SystemTests.firstMismatch(local.segment(), 0, SystemTests.randomBytes(5, size), 0, size))
                    .isEqualTo(-1);
                local.segment().fill((byte)0);
            }
        }
    }

    /** The metrics endpoint shows the path to the peer with its bytes (when this JVM's daemon got the port). */
    private static void assertPathMetrics(final XferDaemon daemon, final String peer)
    {
        final int port = daemon.metricsPort();
        org.junit.jupiter.api.Assumptions.assumeTrue(port > 0, "metrics port taken by another process");
        try
        {
            final java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(java.time.Duration.ofSeconds(10)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(response.body())
                .contains("xferd_path_bytes_total{", "peer=\"" + peer + "\"", "xferd_path_paused{");
        }
        catch (final java.io.IOException | InterruptedException ex)
        {
            throw new AssertionError(ex);
        }
    }
}
