package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The RDMA transport's logic between two in-process daemons over a simulated fabric (byte copies that enforce
 * keys and bounds, with injectable faults). This is not RDMA: it specifies what the transport does with what the
 * verbs layer answers; the real verbs path runs only where a device exists (see RdmaEndToEndTest).
 */
@Timeout(20)
class RdmaTransportTest
{
    private static final long A_BASE = 0x7f00_0000_0000L;
    private static final long B_BASE = 0x7e00_0000_0000L;
    private static final int LENGTH = 64 * 1024 + 123;

    private final SimulatedFabric fabric = new SimulatedFabric();
    private final RdmaSide a = new RdmaSide(fabric, "10.0.0.1:12001", 11, "mlx5_0", "mlx5_1");
    private final RdmaSide b = new RdmaSide(fabric, "10.0.0.2:12001", 22, "mlx5_0", "mlx5_1");
    private final Region local = a.region(A_BASE, LENGTH);
    private final Region target = b.region(B_BASE, LENGTH);

    @AfterEach
    void close()
    {
        a.close();
        b.close();
    }

    @Test
    void shouldWriteRandomBytesIntoThePeersRegion()
    {
        final long handle = a.open(b);
        final byte[] data = fill(local.mapping(), 1);

        assertThat(a.submit(1, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH)).isEqualTo(TransferStatus.OK);

        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 1);
        assertThat(target.mapping().toArray(JAVA_BYTE)).isEqualTo(data);
        assertThat(a.counter(SystemCounter.BYTES_WRITTEN)).isEqualTo(LENGTH);
        assertThat(a.counter(SystemCounter.REMOTE_BYTES_SENT)).isEqualTo(LENGTH);
    }

    @Test
    void shouldReadRandomBytesFromThePeersRegionAtAnOffset()
    {
        final long handle = a.open(b);
        final byte[] data = fill(target.mapping(), 2);
        final int offset = 1000;
        final int length = LENGTH - 2 * offset;

        assertThat(a.submit(2, Opcode.READ, local, A_BASE + offset, handle, B_BASE + offset, length))
            .isEqualTo(TransferStatus.OK);

        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, length, 2);
        final byte[] expected = java.util.Arrays.copyOfRange(data, offset, offset + length);
        assertThat(local.mapping().asSlice(offset, length).toArray(JAVA_BYTE)).isEqualTo(expected);
        assertThat(a.counter(SystemCounter.BYTES_READ)).isEqualTo(length);
    }

    @Test
    void shouldStripeSlicesOverBothNics()
    {
        final long handle = a.open(b);
        fill(local.mapping(), 3);

        a.submit(3, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);

        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 3);
        final long nic0 = a.devices.get(0).bytesCarried.get();
        final long nic1 = a.devices.get(1).bytesCarried.get();
        assertThat(nic0).isPositive();
        assertThat(nic1).isPositive();
        assertThat(nic0 + nic1).isEqualTo(LENGTH);
        assertThat(a.counter("path mlx5_0 -> mlx5_0 (peer 10.0.0.2:12001) bytes")).isEqualTo(nic0);
        assertThat(a.counter("path mlx5_1 -> mlx5_1 (peer 10.0.0.2:12001) bytes")).isEqualTo(nic1);
    }

    @Test
    void shouldUseOnlyTheNicsPreferredForTheLocalRegionsLocation()
    {
        try (RdmaSide pinned = new RdmaSide(fabric, "10.0.0.4:12001", 44, List.of("mlx5_1"), "mlx5_0", "mlx5_1"))
        {
            final Region region = pinned.region(A_BASE, LENGTH);
            final long handle = pinned.open(b);

            pinned.submit(4, Opcode.WRITE, region, A_BASE, handle, B_BASE, LENGTH);

            assertThat(pinned.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 4);
            assertThat(pinned.devices.get(0).bytesCarried.get()).isZero();
            assertThat(pinned.devices.get(1).bytesCarried.get()).isEqualTo(LENGTH);
        }
    }

    @Test
    void shouldFallBackToTheOtherNicsWhenThePreferredOnesQpsAreBroken()
    {
        try (RdmaSide pinned = new RdmaSide(fabric, "10.0.0.4:12001", 44, List.of("mlx5_1"), "mlx5_0", "mlx5_1"))
        {
            final Region region = pinned.region(A_BASE, LENGTH);
            final long handle = pinned.open(b);
            fabric.breakQueuePairsOf(pinned.devices.get(1)); // the preferred NIC's port went down
            pinned.submit(5, Opcode.WRITE, region, A_BASE, handle, B_BASE, LENGTH);
            assertThat(pinned.awaitCompletion(1000)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 5);

            final byte[] data = fill(region.mapping(), 6);
            assertThat(pinned.submit(6, Opcode.WRITE, region, A_BASE, handle, B_BASE, LENGTH))
                .isEqualTo(TransferStatus.OK);

            assertThat(pinned.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 6);
            assertThat(target.mapping().toArray(JAVA_BYTE)).isEqualTo(data);
            assertThat(pinned.devices.get(0).bytesCarried.get()).isEqualTo(LENGTH);
        }
    }

    @Test
    void shouldGiveTheQpsThatOnlyAnswerAPeerASendQueueOfOne()
    {
        a.open(b);

        // the CQ is shared by every QP of a device and sized for the send queues that post
        assertThat(a.devices.get(0).sendQueueDepths).containsExactly(128, 128);
        assertThat(b.devices.get(0).sendQueueDepths).containsExactly(1, 1);
        assertThat(b.devices.get(1).sendQueueDepths).containsExactly(1, 1);
    }

    @Test
    void shouldRefuseATargetRangeOutsideThePeersBuffersBeforePostingAndCountIt()
    {
        final long handle = a.open(b);

        assertThat(a.submit(5, Opcode.WRITE, local, A_BASE, handle, B_BASE + 1, LENGTH))
            .isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertThat(a.submit(6, Opcode.READ, local, A_BASE, handle, B_BASE - 4096, 4096))
            .isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertThat(a.submit(7, Opcode.WRITE, local, A_BASE, handle, Long.MAX_VALUE - 10, 4096))
            .isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);

        assertThat(a.counter(SystemCounter.REMOTE_ACCESS_REFUSED)).isEqualTo(3);
        assertThat(a.awaitCompletion(10)).isNull();
        assertThat(a.devices.get(0).bytesCarried.get() + a.devices.get(1).bytesCarried.get()).isZero();
    }

    @Test
    void shouldFailWithTransportErrorNamingTheWorkCompletionStatusWhenOneSliceFails()
    {
        final long handle = a.open(b);
        fabric.failNextWith(WorkCompletionStatus.REM_ACCESS_ERR);

        a.submit(8, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);

        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 8);
        assertThat(a.transport.agent().lastFailure()).isEqualTo("IBV_WC_REM_ACCESS_ERR");
        assertThat(a.counter("path mlx5_0 -> mlx5_0 (peer 10.0.0.2:12001) failures") +
            a.counter("path mlx5_1 -> mlx5_1 (peer 10.0.0.2:12001) failures")).isEqualTo(1);
        assertThat(a.counter(SystemCounter.REQUESTS_FAILED)).isEqualTo(1);
        assertThat(a.counter(SystemCounter.REQUESTS_COMPLETED)).isZero();
        assertThat(a.transport.agent().activeRequests()).isZero();
    }

    @Test
    void shouldFailWithTransportErrorWhenThePeersRkeyIsWrong()
    {
        final SegmentDescriptor honest = b.descriptor();
        final SegmentDescriptor.Buffer buffer = honest.buffers().get(0);
        final SegmentDescriptor forged = new SegmentDescriptor(honest.version(), honest.name(), honest.protocol(),
            honest.rpcAddress(), honest.epoch(), honest.handle(), honest.devices(), null,
            List.of(new SegmentDescriptor.Buffer(buffer.address(), buffer.length(), buffer.location(), buffer.lkey(),
                List.of(0xdeadL, 0xbeefL))), null);
        final long handle = a.transport.open(b.address, "seg", forged, b.transport::acceptConnect);

        a.submit(9, Opcode.READ, local, A_BASE, handle, B_BASE, LENGTH);

        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 9);
        assertThat(a.transport.agent().lastFailure()).isEqualTo("IBV_WC_REM_ACCESS_ERR");
    }

    @Test
    void shouldCompleteOnlyWhenEverySlicesCompletionIsIn()
    {
        final long handle = a.open(b);
        fabric.holdCompletions(true);

        a.submit(10, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);

        assertThat(a.awaitCompletion(50)).isNull();
        fabric.holdCompletions(false);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 10);
    }

    @Test
    void shouldKeepAtMost64WorkRequestsOutstandingPerQp()
    {
        final int slices = 300; // more than 2 NICs x 2 QPs x 64
        final Region bigLocal = a.region(A_BASE + (1L << 30), slices * RdmaSide.SLICE);
        final Region bigTarget = b.region(B_BASE + (1L << 30), slices * RdmaSide.SLICE);
        final long handle = a.open(b);
        fabric.holdCompletions(true);

        a.submit(16, Opcode.WRITE, bigLocal, bigLocal.ownerAddress(), handle, bigTarget.ownerAddress(),
            bigLocal.length());
        assertThat(a.awaitCompletion(20)).isNull();

        assertThat(fabric.postedWorkRequests()).isEqualTo(2 * 2 * RdmaTransport.MAX_OUTSTANDING_PER_QP);
        fabric.holdCompletions(false);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, bigLocal.length(), 16);
        assertThat(fabric.postedWorkRequests()).isEqualTo(slices);
    }

    @Test
    void shouldTimeOutWhenACompletionIsLostAndIgnoreItIfItComesLate()
    {
        final long handle = a.open(b);
        fabric.holdCompletions(true);

        a.submit(11, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);
        assertThat(a.awaitCompletion(20)).isNull();
        a.advanceClockMs(RdmaSide.TIMEOUT_MS + 1);

        assertThat(a.awaitCompletion(10)).containsExactly(TransferStatus.TIMEOUT, 0, 11);
        assertThat(a.counter(SystemCounter.SLICES_TIMED_OUT)).isPositive();
        assertThat(a.transport.agent().activeRequests()).isZero();

        // the overdue QPs were moved to ERR before the client got its buffer back: nothing lands in it late
        assertThat(fabric.abortedQueuePairs()).isEqualTo(4);
        fabric.holdCompletions(false); // the late (flushed) completions find their slices reused or free: dropped
        assertThat(a.awaitCompletion(20)).isNull();
        assertThat(a.submit(12, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH))
            .isEqualTo(TransferStatus.TARGET_GONE);

        final long reopened = a.open(b); // connects new QPs
        assertThat(a.submit(12, Opcode.WRITE, local, A_BASE, reopened, B_BASE, LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 12);
    }

    @Test
    void shouldStopPostingToAQpAfterItsErrorCompletionAndCarryOnOverTheOthers()
    {
        final long handle = a.open(b);
        fabric.failNextWith(WorkCompletionStatus.REM_ACCESS_ERR);
        a.submit(20, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 20);
        final long postedBefore = fabric.postedWorkRequests();

        // an RC QP that failed a work request is in ERR and would flush every later one: it is not used again
        for (int request = 21; request < 25; request++)
        {
            final byte[] data = fill(local.mapping(), request);
            assertThat(a.submit(request, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH))
                .isEqualTo(TransferStatus.OK);
            assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, request);
            assertThat(target.mapping().toArray(JAVA_BYTE)).isEqualTo(data);
        }
        assertThat(fabric.postedWorkRequests() - postedBefore).isEqualTo(4 * ((LENGTH + RdmaSide.SLICE - 1) /
            RdmaSide.SLICE));
        assertThat(a.counter(SystemCounter.REQUESTS_FAILED)).isEqualTo(1);
    }

    @Test
    void shouldFailAtOnceAndAskForAReopenWhenEveryQpToThePeerIsBroken()
    {
        final int slices = 300; // more than the QPs' credit: some wait for room when the QPs break
        final Region bigLocal = a.region(A_BASE + (1L << 30), slices * RdmaSide.SLICE);
        final Region bigTarget = b.region(B_BASE + (1L << 30), slices * RdmaSide.SLICE);
        final long handle = a.open(b);
        fabric.holdCompletions(true);
        a.submit(30, Opcode.READ, bigLocal, bigLocal.ownerAddress(), handle, bigTarget.ownerAddress(),
            bigLocal.length());
        a.submit(32, Opcode.READ, local, A_BASE, handle, B_BASE, LENGTH); // waits for credit: nothing posted
        assertThat(a.awaitCompletion(20)).isNull();

        fabric.releaseCompletionsFailed(WorkCompletionStatus.RETRY_EXC_ERR); // the peer's NIC went away

        // both answered without waiting for the transfer timeout (the clock does not move), nothing more posted
        assertThat(a.awaitCompletion(100)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 30);
        assertThat(a.awaitCompletion(100)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 32);
        assertThat(a.transport.agent().lastFailure()).isEqualTo("no live QP left to the peer");
        assertThat(fabric.postedWorkRequests()).isEqualTo(2 * 2 * RdmaTransport.MAX_OUTSTANDING_PER_QP);
        assertThat(a.transport.agent().activeRequests()).isZero();
        assertThat(a.submit(31, Opcode.READ, local, A_BASE, handle, B_BASE, LENGTH))
            .isEqualTo(TransferStatus.TARGET_GONE);

        final long reopened = a.open(b);
        final byte[] data = fill(target.mapping(), 31);
        assertThat(a.submit(31, Opcode.READ, local, A_BASE, reopened, B_BASE, LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 31);
        assertThat(local.mapping().toArray(JAVA_BYTE)).isEqualTo(data);
    }

    @Test
    void shouldFailARequestWhoseQpsAllFlushWithoutWaitingForTheTimeout()
    {
        final long handle = a.open(b);
        fabric.breakAllQueuePairs(); // e.g. the link went down after the QPs were connected

        a.submit(40, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);

        assertThat(a.awaitCompletion(100)).containsExactly(TransferStatus.TRANSPORT_ERROR, 0, 40);
        assertThat(a.transport.agent().activeRequests()).isZero();
        assertThat(a.submit(41, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH))
            .isEqualTo(TransferStatus.TARGET_GONE);
    }

    @Test
    void shouldDeregisterARegionOnlyAfterItsInFlightSlicesCompleted()
    {
        final long handle = a.open(b);
        fabric.holdCompletions(true);
        a.submit(13, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);
        a.awaitCompletion(20);

        local.markClosed(); // the client unregistered it while slices are in flight
        a.registrar.retireClosed();

        assertThat(a.registrar.deregisterReclaimable()).isZero();
        assertThat(a.registrar.isRegistered(local)).isTrue();
        assertThat(a.devices.get(0).registrations()).isEqualTo(1);

        fabric.holdCompletions(false);
        assertThat(a.awaitCompletion(1000)).containsExactly(TransferStatus.OK, LENGTH, 13);
        assertThat(a.registrar.deregisterReclaimable()).isEqualTo(1);
        assertThat(a.registrar.isRegistered(local)).isFalse();
        assertThat(a.devices.get(0).registrations()).isZero();
        assertThat(a.devices.get(1).registrations()).isZero();
    }

    @Test
    void shouldRefuseToOpenWhenThePeerCannotConnectItsQps()
    {
        fabric.refuseConnect("simulated RTR failure");

        assertThatThrownBy(() -> a.open(b))
            .isInstanceOf(RdmaConnectException.class)
            .hasMessageContaining("simulated RTR failure");
        assertThat(b.counter(SystemCounter.PEER_CONNECTION_FAILURES)).isEqualTo(1);
        assertThat(a.counter(SystemCounter.PEER_CONNECTION_FAILURES)).isEqualTo(1);
    }

    @Test
    void shouldRefuseAPeerThatServesTcp()
    {
        final SegmentDescriptor rdma = b.descriptor();
        final SegmentDescriptor tcp = new SegmentDescriptor(rdma.version(), rdma.name(), "tcp", rdma.rpcAddress(),
            rdma.epoch(), rdma.handle(), List.of(), null, rdma.buffers(), null);

        assertThatThrownBy(() -> a.transport.open(b.address, "seg", tcp, b.transport::acceptConnect))
            .isInstanceOf(RdmaConnectException.class)
            .hasMessageContaining("serves tcp, not rdma");
    }

    @Test
    void shouldRefuseAQpRequestForADeviceItDoesNotHaveOrThatIsMalformed()
    {
        final byte[] wrongDevice = QpExchangeCodec.encodeRequest(a.address, a.epoch, List.of(
            new QpEndpoint("mlx5_0", "mlx5_9", 0, new io.xferd.nativebindings.verbs.Gid(0, 1), 0x99, 1, 5)));

        assertThatThrownBy(() -> b.transport.acceptConnect(wrongDevice))
            .isInstanceOf(RdmaConnectException.class)
            .hasMessage("QP requested on RDMA device mlx5_9, this daemon serves [mlx5_0, mlx5_1]");
        assertThatThrownBy(() -> b.transport.acceptConnect(new byte[] {1, 0}))
            .isInstanceOf(MalformedQpFrameException.class);
        assertThat(b.counter(SystemCounter.PEER_CONNECTION_FAILURES)).isEqualTo(1);
    }

    @Test
    void shouldAnswerInFlightRequestsWithShuttingDownWhenTheAgentCloses()
    {
        final long handle = a.open(b);
        fabric.dropCompletions(true);
        a.submit(14, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH);
        a.awaitCompletion(5);

        a.transport.stop();
        a.transport.agent().onClose();

        assertThat(a.pollCompletion()).containsExactly(TransferStatus.SHUTTING_DOWN, 0, 14);
        assertThat(fabric.abortedQueuePairs()).isEqualTo(4); // before the client got its buffer back
        assertThat(a.submit(15, Opcode.WRITE, local, A_BASE, handle, B_BASE, LENGTH))
            .isEqualTo(TransferStatus.SHUTTING_DOWN);
    }

    @Test
    void shouldNotAllocateWhilePostingPollingAndCompleting()
    {
        final long handle = a.open(b);
        final int length = 3 * RdmaSide.SLICE;
        final CompletionCount count = new CompletionCount();
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();

        transfer(handle, length, 3_000, count); // warm up: pools, maps, class loading
        final long before = threads.getCurrentThreadAllocatedBytes();
        transfer(handle, length, 2_000, count);
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(count.failed).isZero();
        assertThat(allocated).as("bytes allocated for 2000 requests of 3 slices").isLessThan(2_000);
    }

    private void transfer(final long handle, final int length, final int requests, final CompletionCount count)
    {
        for (int i = 0; i < requests; i++)
        {
            final int opcode = (i & 1) == 0 ? Opcode.WRITE : Opcode.READ;
            final long done = count.completed;
            if (a.submit(i, opcode, local, A_BASE, handle, B_BASE, length) != TransferStatus.OK)
            {
                count.failed++; // no assertion objects in the measured loop
            }
            for (int cycles = 0; count.completed == done && cycles < 100; cycles++)
            {
                a.transport.agent().doWork();
                a.session.completionRing().read(count, 16);
            }
            if (count.completed != done + 1)
            {
                count.failed++;
            }
        }
    }

    /**
     * Counts completions read from the ring, allocating nothing.
     */
    private static final class CompletionCount implements org.agrona.concurrent.MessageHandler
    {
        private final io.xferd.ipc.CompletionFlyweight completion = new io.xferd.ipc.CompletionFlyweight();
        long completed;
        long failed;

        @Override
        public void onMessage(
            final int type, final org.agrona.MutableDirectBuffer buffer, final int index, final int length)
        {
            completed++;
            if (completion.wrap(buffer, index).status() != TransferStatus.OK)
            {
                failed++;
            }
        }
    }

    private static byte[] fill(final MemorySegment memory, final long seed)
    {
        final byte[] data = new byte[(int)memory.byteSize()];
        new Random(seed).nextBytes(data);
        MemorySegment.copy(data, 0, memory, JAVA_BYTE, 0, data.length);
        return data;
    }
}
