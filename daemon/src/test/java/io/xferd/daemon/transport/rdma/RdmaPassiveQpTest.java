package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.memory.Region;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The answering ("passive") QPs a daemon makes for a peer's CONNECT_QP, kept per requester: a reconnect or a
 * restart of the same requester destroys the previous set (ERR first), different requesters keep theirs, an
 * older epoch is refused, and the completion queue budget gets every destroyed QP's share back.
 */
@Timeout(20)
class RdmaPassiveQpTest
{
    private static final long A_BASE = 0x7f00_0000_0000L;
    private static final long B_BASE = 0x7e00_0000_0000L;
    private static final int LENGTH = 64 * 1024 + 7;
    /** Two devices, two connections per peer: four QPs answer one requester. */
    private static final int SET = 4;

    private final SimulatedFabric fabric = new SimulatedFabric();
    private final RdmaSide a = new RdmaSide(fabric, "10.0.0.1:12001", 11, "mlx5_0", "mlx5_1");
    private final RdmaSide b = new RdmaSide(fabric, "10.0.0.2:12001", 22, "mlx5_0", "mlx5_1");
    private final Region local = a.region(A_BASE, LENGTH);
    private final Region target = b.region(B_BASE, LENGTH);
    private final List<RdmaSide> others = new ArrayList<>();

    @AfterEach
    void close()
    {
        others.forEach(RdmaSide::close);
        a.close();
        b.close();
    }

    @Test
    void shouldDestroyTheOldPassiveQpsWhenTheSameRequesterReconnects()
    {
        long handle = a.open(b);
        assertThat(b.transport.passiveQueuePairs()).isEqualTo(SET);

        for (int i = 0; i < 10; i++)
        {
            breakAllQpsOfA(handle); // none usable: the next open connects anew
            handle = a.open(b);

            assertThat(b.transport.passiveQueuePairs()).isEqualTo(SET);
            assertThat(liveQueuePairsOf(b)).as("B's live QPs after reconnect %d", i + 1).isEqualTo(SET);
        }
        assertThat(fabric.destroyedAfterAbort()).as("moved to ERR, then destroyed").isEqualTo(10 * SET);
        assertThat(b.devices.get(0).budget.reserved()).isEqualTo(2 * RdmaTransport.PASSIVE_SEND_QUEUE_DEPTH);
        assertThat(b.devices.get(1).budget.reserved()).isEqualTo(2 * RdmaTransport.PASSIVE_SEND_QUEUE_DEPTH);
        assertWrites(a);
    }

    @Test
    void shouldDestroyTheQpsAnsweredToAConnectThatFailedOnTheRequestersSide()
    {
        // the requester got an answer but could not use it (closed its QPs): B's answer stays until it comes back
        b.transport.acceptConnect(QpExchangeCodec.encodeRequest(a.address, a.epoch, requesterEndpoints()));
        assertThat(b.transport.passiveQueuePairs()).isEqualTo(SET);

        a.open(b);

        assertThat(b.transport.passiveQueuePairs()).isEqualTo(SET);
        assertThat(liveQueuePairsOf(b)).isEqualTo(SET);
        assertWrites(a);
    }

    @Test
    void shouldDestroyTheOldPassiveQpsWhenTheRequesterRestartsAndFlushWhatTheOldLifePosts()
    {
        final long oldHandle = a.open(b);
        final RdmaSide restarted = side(a.address, a.epoch + 1);

        restarted.open(b);

        assertThat(b.transport.passiveQueuePairs()).isEqualTo(SET);
        assertThat(liveQueuePairsOf(b)).isEqualTo(SET);
        assertThat(fabric.destroyedAfterAbort()).isEqualTo(SET);
        assertThat(b.devices.get(0).budget.reserved() + b.devices.get(1).budget.reserved())
            .isEqualTo(SET * RdmaTransport.PASSIVE_SEND_QUEUE_DEPTH);
        // the old life's QPs have nothing answering them any more
        assertThat(a.submit(1, Opcode.WRITE, local, A_BASE, oldHandle, B_BASE, LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 1);
        assertWrites(restarted);
    }

    @Test
    void shouldKeepThePassiveQpsOfDifferentRequesters()
    {
        final RdmaSide c = side("10.0.0.3:12001", 33);

        final long handle = a.open(b);
        c.open(b);
        breakAllQpsOfA(handle);
        a.open(b); // A reconnects: C's set stays

        assertThat(b.transport.passiveQueuePairs()).isEqualTo(2 * SET);
        assertThat(liveQueuePairsOf(b)).isEqualTo(2 * SET);
        assertThat(fabric.destroyedAfterAbort()).isEqualTo(SET);
        assertWrites(a);
    }

    @Test
    void shouldRefuseAStaleEpochAndKeepTheCurrentQps()
    {
        final RdmaSide restarted = side(a.address, a.epoch + 1);
        restarted.open(b);
        final long failuresBefore = b.counter(SystemCounter.PEER_CONNECTION_FAILURES);

        assertThatThrownBy(() -> a.open(b)) // the previous life, late
            .isInstanceOf(StaleQpRequestException.class)
            .hasMessage("QP request from 10.0.0.1:12001 at epoch 11, older than its epoch 12 seen before: refused");
        assertThatThrownBy(() -> b.transport.acceptConnect(
            QpExchangeCodec.encodeRequest(a.address, a.epoch, requesterEndpoints())))
            .isInstanceOf(StaleQpRequestException.class);

        assertThat(b.counter(SystemCounter.PEER_CONNECTION_FAILURES)).isEqualTo(failuresBefore + 2);
        assertThat(b.transport.passiveQueuePairs()).isEqualTo(SET);
        assertThat(liveQueuePairsOf(b)).isEqualTo(SET);
        assertWrites(restarted);
    }

    @Test
    void shouldRememberTheEpochOfARequesterWhoseConnectFailedHere()
    {
        final RdmaSide restarted = side(a.address, a.epoch + 1);
        fabric.refuseConnect("port down");
        assertThatThrownBy(() -> restarted.open(b)).isInstanceOf(RdmaConnectException.class);
        fabric.refuseConnect(null);

        assertThat(b.transport.passiveQueuePairs()).isZero();
        assertThat(liveQueuePairsOf(b)).isZero();
        assertThatThrownBy(() -> a.open(b)).isInstanceOf(StaleQpRequestException.class);
    }

    @Test
    void shouldDestroyEveryPassiveQpWhenItCloses()
    {
        final RdmaSide answerer = new RdmaSide(fabric, "10.0.0.5:12001", 55, "mlx5_0", "mlx5_1");
        a.open(answerer);
        side("10.0.0.3:12001", 33).open(answerer);
        assertThat(liveQueuePairsOf(answerer)).isEqualTo(2 * SET);

        answerer.close();

        assertThat(liveQueuePairsOf(answerer)).isZero();
        assertThat(answerer.transport.passiveQueuePairs()).isZero();
        assertThat(answerer.devices.get(0).budget.reserved() + answerer.devices.get(1).budget.reserved()).isZero();
    }

    /**
     * Every QP goes to ERR and A's requests fail until A's agent took all of its QPs out of service.
     */
    private void breakAllQpsOfA(final long handle)
    {
        fabric.breakAllQueuePairs();
        for (int i = 0; i < 20; i++)
        {
            if (a.submit(200 + i, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH) == TransferStatus.TARGET_GONE)
            {
                return;
            }
            assertThat(a.awaitCompletion(100)).isNotNull();
        }
        throw new AssertionError("A's QPs did not all fail");
    }

    private RdmaSide side(final String address, final long epoch)
    {
        final RdmaSide side = new RdmaSide(fabric, address, epoch, "mlx5_0", "mlx5_1");
        others.add(side);
        return side;
    }

    /** QPs a requester would send: one per (device, connection), each meant for B's device of the same index. */
    private List<QpEndpoint> requesterEndpoints()
    {
        final List<QpEndpoint> endpoints = new ArrayList<>();
        for (final SimulatedFabric.SimulatedDevice device : a.devices)
        {
            for (int q = 0; q < 2; q++)
            {
                final QpEndpoint qp = device.createQueuePair(128).local();
                endpoints.add(new QpEndpoint(qp.nic(), device.name, qp.lid(), qp.gid(), qp.qpn(), qp.psn(), qp.mtu()));
            }
        }
        return endpoints;
    }

    private int liveQueuePairsOf(final RdmaSide side)
    {
        int live = 0;
        for (final SimulatedFabric.SimulatedDevice device : side.devices)
        {
            live += fabric.liveQueuePairsOf(device);
        }
        return live;
    }

    /** A WRITE from {@code requester} to B's region lands: the QPs B answered last are the ones in use. */
    private void assertWrites(final RdmaSide requester)
    {
        final Region region = requester == a ? local : requester.region(A_BASE, LENGTH);
        final long handle = requester.open(b);
        final long id = 100 + others.indexOf(requester);

        assertThat(requester.submit(id, Opcode.WRITE, region, A_BASE, handle, B_BASE, LENGTH))
            .isEqualTo(TransferStatus.OK);
        assertThat(requester.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, id);
    }
}
