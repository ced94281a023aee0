package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.control.SessionRegions;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.tcp.PeerServer;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Opening a peer's segment over its real RPC port (TCP, authenticated handshake): the descriptor comes with one
 * rkey per device and the QPs are exchanged with CONNECT_QP / QP_ANSWER on the same connection. The QPs
 * themselves are simulated (see {@link SimulatedFabric}).
 */
@Timeout(20)
class RdmaOverRpcPortTest
{
    private static final long A_BASE = 0x7f00_0000_0000L;
    private static final long B_BASE = 0x7e00_0000_0000L;
    private static final int LENGTH = 3 * RdmaSide.SLICE + 5;

    private final SimulatedFabric fabric = new SimulatedFabric();
    private final RdmaSide a = new RdmaSide(fabric, "127.0.0.1:1", 1, "mlx5_0");
    private final RdmaSide b = new RdmaSide(fabric, "unused", 2, "mlx5_0", "mlx5_1");
    private final Region local = a.region(A_BASE, LENGTH);
    private final Region target = b.region(B_BASE, LENGTH);
    private final PeerServer server;

    RdmaOverRpcPortTest()
    {
        final SessionTable registry = new SessionTable(4);
        registry.add(b.session);
        SessionRegions.set(b.session, RegionTable.EMPTY.with(target));
        // the server's handshake deadline runs on the real clock (b's agents already took their 200 ms timeout on
        // the tests' clocks): 200 ms of wall time is not enough for a handshake on a loaded 2-core host
        b.context.rpcAddress("127.0.0.1:0").clusterToken(RdmaSide.TOKEN).transferTimeoutMs(10_000);
        // the RPC session's time limit (the agents' timeouts run on the tests' own clocks)
        a.context.clusterToken(RdmaSide.TOKEN).transferTimeoutMs(10_000);
        server = new PeerServer(b.context, registry, b.counters, new ManyToOneConcurrentArrayQueue<>(4), 77,
            LocalNics.resolve(List.of()));
        server.describeWith("rdma", b.registrar.devices().names(), b.transport::describe);
    }

    @AfterEach
    void close()
    {
        server.close();
        a.close();
        b.close();
    }

    @Test
    void shouldOpenTheSegmentExchangeQpsAndWriteThroughThem() throws Exception
    {
        server.handle(PeerProtocol.CONNECT_QP, b.transport::acceptConnect);
        server.start();

        final Object result = open();

        assertThat(result).isInstanceOf(Long.class);
        final long handle = (Long)result;
        assertThat(a.transport.remoteSegments().get(handle).descriptor().buffers().get(0).rkey()).hasSize(2);
        local.mapping().fill((byte)0x5a);
        assertThat(a.submit(1, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 1);
        assertThat(target.mapping().mismatch(local.mapping())).isEqualTo(-1);
    }

    @Test
    void shouldReportAPeerThatDoesNotServeTheQpExchange() throws Exception
    {
        server.start(); // no CONNECT_QP handler: a TCP daemon describing itself as rdma

        assertThat(open()).asString().contains("does not serve request type 12");
    }

    @Test
    void shouldReportThePeersReasonWhenItCannotConnectItsQps() throws Exception
    {
        server.handle(PeerProtocol.CONNECT_QP, b.transport::acceptConnect);
        server.start();
        fabric.refuseConnect("simulated: port down");

        assertThat(open()).asString().contains("simulated: port down");
    }

    @Test
    void shouldRefuseAQpRequestFromAnOlderEpochOfTheSameRequesterOverTheWire() throws Exception
    {
        server.handle(PeerProtocol.CONNECT_QP, b.transport::acceptConnect);
        server.start();
        try (RdmaSide restarted = new RdmaSide(fabric, a.address, a.epoch + 4, "mlx5_0"))
        {
            restarted.context.clusterToken(RdmaSide.TOKEN).transferTimeoutMs(10_000);
            assertThat(open(restarted)).isInstanceOf(Long.class);
            assertThat(b.transport.passiveQueuePairs()).isEqualTo(2);

            assertThat(open(a)).asString().startsWith("QP exchange with ")
                .endsWith("failed: peer refused: QP request from 127.0.0.1:1 at epoch 1, older than its epoch 5 seen before: refused");
            assertThat(b.transport.passiveQueuePairs()).isEqualTo(2);
        }
    }

    private Object open() throws Exception
    {
        return open(a);
    }

    private Object open(final RdmaSide requester) throws Exception
    {
        final CompletableFuture<Object> result = new CompletableFuture<>();
        requester.transport.openAsync(server.advertisedAddress(), "seg", result::complete);
        return result.get(10, TimeUnit.SECONDS);
    }
}
