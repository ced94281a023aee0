package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.transport.tcp.FakePeerServer;
import io.xferd.daemon.transport.tcp.RawPeer;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a peer that is broken, stalled or hostile can make a daemon do, on real loopback sockets: nothing it
 * reports complete unless every byte arrived, nothing it holds forever, nothing unbounded it spends.
 */
@Tag("integration")
@Timeout(60)
class HostilePeerTest
{
    private final Path dir = SystemTests.newDaemonDirectory();
    private XferDaemon daemon;

    @AfterEach
    void tearDown()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(dir);
    }

    @ParameterizedTest
    @EnumSource(value = FakePeerServer.ReadAnswer.class, names = {"EMPTY", "SHORT", "OVERSIZE"})
    void shouldFailAReadWhosePeerAnswersOkWithTheWrongNumberOfBytes(final FakePeerServer.ReadAnswer answer)
        throws Exception
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(dir).transferTimeoutMs(2000));
        try (FakePeerServer peer = new FakePeerServer(SystemTests.CLUSTER_TOKEN, answer);
            XferClient client = XferClient.connect(SystemTests.clientContext(dir, "prefill")))
        {
            final SharedBuffer local = client.allocateMemory(64 * 1024);
            client.registerMemory(local, "cpu:0");
            final long segment = client.openSegment(peer.address() + "/decode");

            final long batch = client.allocateBatch(1);
            client.submitTransfer(batch, TransferRequest.read(local.address(), segment,
                FakePeerServer.BUFFER_ADDRESS, 64 * 1024));
            assertThat(client.awaitBatch(batch, 20_000)).isFalse();
            final TaskStatus status = client.getTransferStatus(batch, 0);
            assertThat(status.state()).isEqualTo(TaskStatus.FAILED);
            assertThat(status.status()).isEqualTo(TransferStatus.TRANSPORT_ERROR);
            assertThat(status.transferredBytes()).isZero();
            assertThat(peer.readsAnswered()).isPositive();
        }
    }

    @Test
    void shouldCutOffAPeerStalledInTheMiddleOfAWriteReleaseTheRegionAndNeverAcknowledgeIt() throws Exception
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(dir).transferTimeoutMs(500));
        try (XferClient owner = XferClient.connect(SystemTests.clientContext(dir, "decode"));
            RawPeer peer = RawPeer.connect(daemon.rpcAddress(), SystemTests.CLUSTER_TOKEN))
        {
            final SharedBuffer target = owner.allocateMemory(1 << 20);
            owner.registerMemory(target, "cpu:0");
            final long handle = peer.handle("decode");

            // a WRITE of 1 MiB of which 4 KiB come, then nothing: the daemon holds the region while it waits
            peer.writeHead(1, handle, target.address(), 1 << 20, 4096);

            // the owner can still unregister (answered once the borrow is released, after the transfer timeout;
            // its control timeout is 10 s, so a borrow held forever fails this)
            owner.unregisterMemory(target.address());
            // and the WRITE cut short was never acknowledged: the connection ends without an answer
            assertThatThrownBy(peer::ack).isInstanceOf(EOFException.class);
        }
    }

    @Test
    void shouldCloseAConnectionThatDoesNotFinishTheHandshakeWithinTheDeadline() throws Exception
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(dir).transferTimeoutMs(300));
        try (SocketChannel silent = SocketChannel.open(address(daemon)))
        {
            // says nothing: closed by the daemon (the read returns end of stream), bounded by the test's timeout
            assertThat(silent.read(ByteBuffer.allocate(1))).isEqualTo(-1);
        }
    }

    @Test
    void shouldServeAtMostItsCapOfConnectionsInTheHandshakeAndAdmitPeersAfterAFlood() throws Exception
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(dir).maxPeerConnections(16).transferTimeoutMs(60_000));
        final List<SocketChannel> flood = new ArrayList<>();
        try (XferClient owner = XferClient.connect(SystemTests.clientContext(dir, "decode")))
        {
            owner.registerMemory(owner.allocateMemory(4096), "cpu:0");
            // 40 connections that never finish the handshake (the deadline is a minute): 4 are served (16 / 8, at
            // least 4), every other one is closed at once, before a thread is spent on it
            for (int i = 0; i < 40; i++)
            {
                flood.add(SocketChannel.open(address(daemon)));
            }
            int closedByDaemon = 0;
            for (final SocketChannel channel : flood.subList(4, flood.size()))
            {
                closedByDaemon += channel.read(ByteBuffer.allocate(1)) == -1 ? 1 : 0;
            }
            assertThat(closedByDaemon).isEqualTo(36);
            assertThat(peerThreads()).isLessThanOrEqualTo(4);
            // while the handshake slots are taken, an honest peer is turned away too (that is the price of the cap)
            assertThatThrownBy(() -> RawPeer.connect(daemon.rpcAddress(), SystemTests.CLUSTER_TOKEN))
                .isInstanceOf(IOException.class);

            // the flood ends: an honest peer is admitted and served
            for (final SocketChannel channel : flood)
            {
                channel.close();
            }
            flood.clear();
            SystemTests.awaitCondition(() -> peerThreads() == 0, SystemTests.WAIT, () -> "flood threads ended");
            try (RawPeer peer = RawPeer.connect(daemon.rpcAddress(), SystemTests.CLUSTER_TOKEN))
            {
                assertThat(peer.handle("decode")).isNotZero();
            }
        }
        finally
        {
            for (final SocketChannel channel : flood)
            {
                channel.close();
            }
        }
    }

    @Test
    void shouldRefuseAnOpenWhenThePeerAnswersWithAnotherSegmentsDescriptor() throws Exception
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(dir));
        try (FakePeerServer peer = FakePeerServer.answeringFor(SystemTests.CLUSTER_TOKEN, "other");
            XferClient client = XferClient.connect(SystemTests.clientContext(dir, "prefill")))
        {
            assertThatThrownBy(() -> client.openSegment(peer.address() + "/decode"))
                .isInstanceOf(ControlException.class)
                .hasMessageContaining("answered a request for segment decode");
        }
    }

    private static long peerThreads()
    {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.getName().startsWith("xferd-peer-in-") && thread.isAlive()).count();
    }

    private static InetSocketAddress address(final XferDaemon daemon)
    {
        final String rpc = daemon.rpcAddress();
        return new InetSocketAddress(rpc.substring(0, rpc.lastIndexOf(':')),
            Integer.parseInt(rpc.substring(rpc.lastIndexOf(':') + 1)));
    }
}
