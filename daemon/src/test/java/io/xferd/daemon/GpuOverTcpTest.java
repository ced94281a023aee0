package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * GPU memory between two daemons over TCP, staged through each peer thread's pinned buffer. Both daemons run
 * {@link HostBackedDeviceMemory}, so "GPU memory" is host memory only the device runtime may touch: a byte that
 * bypassed the staging would not be where it belongs. The staging buffer (5000 bytes) is smaller than a slice (16 KiB)
 * and divides neither it nor the request, which spans four slices, so every slice is several chunks, the last short.
 */
@Tag("integration")
@Timeout(60)
class GpuOverTcpTest
{
    private static final int SLICE = 16 * 1024;
    private static final int STAGING = 5000;
    private static final int LENGTH = 3 * SLICE + 1234;
    // one device copy per chunk of each slice: 16384 = 3 x 5000 + 1384, and the last slice's 1234 bytes
    private static final int CHUNKS = 3 * 4 + 1;
    private static final int REGION = 2 * LENGTH + 8192;
    // an interior, unaligned address inside each GPU range
    private static final long OFFSET = 4096 + 7;
    private static final long GPU_POINTER = 0x7f00_0000_0000L;

    private final Path directory = SystemTests.newDaemonDirectory();
    private final Path peerDirectory = SystemTests.newDaemonDirectory();
    private final Arena arena = Arena.ofShared();
    private final HostBackedDeviceMemory localGpu = new HostBackedDeviceMemory();
    private final HostBackedDeviceMemory peerGpu = new HostBackedDeviceMemory();
    private final MemorySegment localAllocation = arena.allocate(REGION, 4096);
    private final MemorySegment peerAllocation = arena.allocate(REGION, 4096);
    private XferDaemon daemon;
    private XferDaemon peer;
    private RawControlSession gpuTarget;
    private XferClient hostTarget;
    private RawControlSession gpuInitiator;
    private XferClient hostInitiator;
    private SharedBuffer targetHost;
    private SharedBuffer localHost;
    // segments as the host initiator sees them, and as the GPU initiator does
    private long gpuSegment;
    private long hostSegment;
    private long gpuSegmentOfGpu;
    private long hostSegmentOfGpu;

    @BeforeEach
    void launch()
    {
        peer = XferDaemon.launch(daemonContext(peerDirectory, peerGpu));
        daemon = XferDaemon.launch(daemonContext(directory, localGpu));
        gpuTarget = RawControlSession.hello(peerDirectory, "gpu-target", WAIT);
        hostTarget = XferClient.connect(SystemTests.clientContext(peerDirectory, "host-target"));
        gpuInitiator = RawControlSession.hello(directory, "gpu-initiator", WAIT);
        hostInitiator = XferClient.connect(SystemTests.clientContext(directory, "host-initiator"));

        registerGpu(gpuTarget, peerAllocation);
        targetHost = hostTarget.allocateMemory(REGION);
        hostTarget.registerMemory(targetHost, "cpu:0");
        registerGpu(gpuInitiator, localAllocation);
        localHost = hostInitiator.allocateMemory(REGION);
        hostInitiator.registerMemory(localHost, "cpu:0");

        gpuSegment = hostInitiator.openSegment(peer.rpcAddress() + "/gpu-target");
        hostSegment = hostInitiator.openSegment(peer.rpcAddress() + "/host-target");
        gpuSegmentOfGpu = open(gpuInitiator, 2, peer.rpcAddress() + "/gpu-target");
        hostSegmentOfGpu = open(gpuInitiator, 3, peer.rpcAddress() + "/host-target");
    }

    @AfterEach
    void tearDown()
    {
        for (final AutoCloseable closeable : new AutoCloseable[]{hostInitiator, gpuInitiator, hostTarget, gpuTarget,
            daemon, peer})
        {
            if (closeable != null)
            {
                try
                {
                    closeable.close();
                }
                catch (final Exception ignore)
                {
                    // closing anyway
                }
            }
        }
        arena.close();
        SystemTests.deleteRecursively(directory);
        SystemTests.deleteRecursively(peerDirectory);
    }

    @Test
    void shouldWriteHostMemoryIntoThePeersGpuMemory()
    {
        SystemTests.fill(localHost.segment().asSlice(0, LENGTH), 1);

        hostInitiator.transferSyncWrite(gpuSegment, localHost.address(), GPU_POINTER + OFFSET, LENGTH);

        assertLanded(peerAllocation, OFFSET, 1);
        assertThat(peerGpu.copies.get()).as("a device copy per chunk").isEqualTo(CHUNKS);
        assertThat(localGpu.pinnedAllocations.get()).as("a host-only initiator never stages").isZero();
    }

    @Test
    void shouldReadThePeersGpuMemoryIntoHostMemory()
    {
        SystemTests.fill(peerAllocation.asSlice(OFFSET, LENGTH), 2);

        hostInitiator.transferSyncRead(gpuSegment, localHost.address() + 3, GPU_POINTER + OFFSET, LENGTH);

        assertLanded(localHost.segment(), 3, 2);
        assertThat(peerGpu.copies.get()).isEqualTo(CHUNKS);
    }

    @Test
    void shouldWriteGpuMemoryIntoThePeersHostMemory()
    {
        SystemTests.fill(localAllocation.asSlice(OFFSET, LENGTH), 3);

        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address() + 5, LENGTH, WAIT), "OK");

        assertLanded(targetHost.segment(), 5, 3);
        assertThat(localGpu.copies.get()).isEqualTo(CHUNKS);
        assertThat(peerGpu.pinnedAllocations.get()).as("a host-only target never stages").isZero();
        assertThat(counter(daemon, SystemCounter.REMOTE_BYTES_SENT)).isGreaterThanOrEqualTo(LENGTH);
        assertThat(counter(peer, SystemCounter.REMOTE_BYTES_RECEIVED)).isGreaterThanOrEqualTo(LENGTH);
    }

    @Test
    void shouldReadThePeersHostMemoryIntoGpuMemory()
    {
        SystemTests.fill(targetHost.segment().asSlice(0, LENGTH), 4);

        assertStatus(gpuInitiator.submitAndAwait(Opcode.READ, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "OK");

        assertLanded(localAllocation, OFFSET, 4);
        assertThat(localGpu.copies.get()).isEqualTo(CHUNKS);
    }

    @Test
    void shouldWriteAndReadBetweenGpuMemoryOfTwoDaemons()
    {
        SystemTests.fill(localAllocation.asSlice(OFFSET, LENGTH), 5);
        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, gpuSegmentOfGpu, GPU_POINTER + OFFSET,
            GPU_POINTER + OFFSET + LENGTH, LENGTH, WAIT), "OK");
        assertLanded(peerAllocation, OFFSET + LENGTH, 5);

        SystemTests.fill(peerAllocation.asSlice(0, LENGTH), 6);
        assertStatus(gpuInitiator.submitAndAwait(Opcode.READ, gpuSegmentOfGpu, GPU_POINTER + OFFSET + LENGTH,
            GPU_POINTER, LENGTH, WAIT), "OK");
        assertLanded(localAllocation, OFFSET + LENGTH, 6);

        assertThat(localGpu.copies.get()).isEqualTo(2 * CHUNKS);
        assertThat(peerGpu.copies.get()).isEqualTo(2 * CHUNKS);
    }

    @Test
    void shouldFailAWriteWhoseCopyOutOfGpuMemoryFailsMidSliceAndKeepTheConnectionInStep()
    {
        SystemTests.fill(localAllocation.asSlice(OFFSET, LENGTH), 7);
        localGpu.failCopyNumber(2);

        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "TRANSPORT_ERROR");

        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "OK");
        assertLanded(targetHost.segment(), 0, 7);
        assertThat(counter(daemon, SystemCounter.PEER_CONNECTIONS_OUT)).as("the frame was completed, not cut")
            .isEqualTo(1);
    }

    @Test
    void shouldFailAReadWhoseCopyIntoGpuMemoryFailsMidSliceAndKeepTheConnectionInStep()
    {
        SystemTests.fill(targetHost.segment().asSlice(0, LENGTH), 8);
        localGpu.failCopyNumber(2);

        assertStatus(gpuInitiator.submitAndAwait(Opcode.READ, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "TRANSPORT_ERROR");

        assertStatus(gpuInitiator.submitAndAwait(Opcode.READ, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "OK");
        assertLanded(localAllocation, OFFSET, 8);
        assertThat(counter(daemon, SystemCounter.PEER_CONNECTIONS_OUT)).isEqualTo(1);
    }

    @Test
    void shouldFailAWriteTheTargetCannotPlaceInGpuMemoryAndKeepTheConnectionInStep()
    {
        SystemTests.fill(localHost.segment().asSlice(0, LENGTH), 9);
        peerGpu.failCopyNumber(2);

        assertStatus(write(gpuSegment, GPU_POINTER + OFFSET), "TRANSPORT_ERROR");

        assertStatus(write(gpuSegment, GPU_POINTER + OFFSET), "OK");
        assertLanded(peerAllocation, OFFSET, 9);
        assertThat(counter(daemon, SystemCounter.PEER_CONNECTIONS_OUT)).isEqualTo(1);
    }

    @Test
    void shouldAnswerAReadWithAnErrorWhenTheTargetsFirstCopyOutOfGpuMemoryFails()
    {
        SystemTests.fill(peerAllocation.asSlice(OFFSET, LENGTH), 10);
        peerGpu.failCopyNumber(1);

        assertStatus(read(gpuSegment, GPU_POINTER + OFFSET), "TRANSPORT_ERROR");

        assertStatus(read(gpuSegment, GPU_POINTER + OFFSET), "OK");
        assertLanded(localHost.segment(), 0, 10);
        assertThat(counter(daemon, SystemCounter.PEER_CONNECTIONS_OUT)).isEqualTo(1);
    }

    @Test
    void shouldCloseTheConnectionWhenTheTargetsCopyOutOfGpuMemoryFailsMidAnswerAndNeverReportTheReadComplete()
    {
        SystemTests.fill(peerAllocation.asSlice(OFFSET, LENGTH), 11);
        peerGpu.failCopyNumber(2);

        assertStatus(read(gpuSegment, GPU_POINTER + OFFSET), "TRANSPORT_ERROR");

        // the pool connects again for the next request
        assertStatus(read(gpuSegment, GPU_POINTER + OFFSET), "OK");
        assertLanded(localHost.segment(), 0, 11);
        assertThat(counter(daemon, SystemCounter.PEER_CONNECTIONS_OUT)).isEqualTo(2);
    }

    @Test
    void shouldFailAWriteFromGpuMemoryWithoutPinnedMemoryAndServeTheNextOneOnAFreshConnection()
    {
        SystemTests.fill(localAllocation.asSlice(OFFSET, LENGTH), 13);
        localGpu.failPinned = true;

        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "TRANSPORT_ERROR");

        localGpu.failPinned = false;
        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, hostSegmentOfGpu, GPU_POINTER + OFFSET,
            targetHost.address(), LENGTH, WAIT), "OK");
        assertLanded(targetHost.segment(), 0, 13);
    }

    @Test
    void shouldKeepGpuMemoryOpenUntilTheSendersCopyEndsWhenTheConnectionBreaksUnderIt() throws Exception
    {
        SystemTests.fill(localAllocation.asSlice(OFFSET, SLICE), 15);
        // one slice, whose first copy out of GPU memory waits at a gate while the peer goes away under it
        final CountDownLatch gate = new CountDownLatch(1);
        localGpu.copyGate = gate;
        final XferDaemon gone = peer;
        final Thread closer = new Thread(() ->
        {
            SystemTests.awaitCondition(localGpu::isCopying, WAIT, () -> "the copy never started");
            gone.close();
        });
        closer.start();
        try
        {
            // the break (the peer's close, or the watchdog) fails the slice, so the request ends while the copy waits
            assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, hostSegmentOfGpu, GPU_POINTER + OFFSET,
                targetHost.address(), SLICE, WAIT), "TRANSPORT_ERROR");
            assertThat(localGpu.isCopying()).as("the copy is still under way").isTrue();

            // its owner goes while the copy still reads its memory; the daemon must not close the allocation yet
            final long disconnected = counter(daemon, SystemCounter.CLIENTS_DISCONNECTED);
            gpuInitiator.close();
            gpuInitiator = null;
            SystemTests.awaitCondition(() -> counter(daemon, SystemCounter.CLIENTS_DISCONNECTED) > disconnected, WAIT,
                () -> "the daemon never saw the client go");
            // and the conductor has begun a later duty cycle, so the cycle that disconnected the client also ran its
            // reclaim: a daemon that freed the region under the copy has done so by now, with the copy still held
            final MappedByteBuffer cncMapping =
                IoUtil.mapExistingFile(directory.resolve(CncFileDescriptor.CNC_FILE).toFile(), "cnc");
            try
            {
                final UnsafeBuffer cnc = new UnsafeBuffer(cncMapping);
                final long heartbeat = CncFileDescriptor.heartbeatMs(cnc);
                SystemTests.awaitCondition(() -> CncFileDescriptor.heartbeatMs(cnc) > heartbeat, WAIT,
                    () -> "the conductor's heartbeat stopped");
            }
            finally
            {
                IoUtil.unmap(cncMapping);
            }
        }
        finally
        {
            gate.countDown();
            closer.join(10_000);
            peer = null;
        }

        // the copy ends: the daemon closes the GPU allocation once nothing borrows the region
        SystemTests.awaitCondition(() -> !localGpu.isCopying() &&
            localGpu.calls.stream().anyMatch(call -> call.startsWith("close device")), WAIT,
            () -> "calls: " + localGpu.calls);
        assertThat(localGpu.closedWhileCopying).as("GPU memory closed while a copy still read it").isFalse();
    }

    @Test
    void shouldFreeEveryPinnedBufferWhenTheDaemonsClose()
    {
        SystemTests.fill(localAllocation.asSlice(OFFSET, LENGTH), 12);
        assertStatus(gpuInitiator.submitAndAwait(Opcode.WRITE, gpuSegmentOfGpu, GPU_POINTER + OFFSET,
            GPU_POINTER + OFFSET, LENGTH, WAIT), "OK");
        assertStatus(gpuInitiator.submitAndAwait(Opcode.READ, gpuSegmentOfGpu, GPU_POINTER + OFFSET,
            GPU_POINTER + OFFSET, LENGTH, WAIT), "OK");
        assertThat(localGpu.pinnedAllocations.get()).isPositive();
        assertThat(peerGpu.pinnedAllocations.get()).isPositive();

        hostInitiator.close();
        gpuInitiator.close();
        hostTarget.close();
        gpuTarget.close();
        daemon.close();
        peer.close();

        SystemTests.awaitCondition(() -> localGpu.pinned.isEmpty() && peerGpu.pinned.isEmpty(), WAIT,
            () -> "pinned buffers left: " + localGpu.pinned.size() + " here, " + peerGpu.pinned.size() + " at the peer");
    }

    private static DaemonContext daemonContext(final Path directory, final HostBackedDeviceMemory gpu)
    {
        // one connection per peer: a request after a failed one must go over the very same stream
        return SystemTests.daemonContext(directory).deviceMemory(gpu).sliceSize(SLICE).stagingBufferSize(STAGING)
            .connectionsPerPeer(1);
    }

    private int write(final long segment, final long targetAddress)
    {
        return await(TransferRequest.write(localHost.address(), segment, targetAddress, LENGTH));
    }

    private int read(final long segment, final long targetAddress)
    {
        return await(TransferRequest.read(localHost.address(), segment, targetAddress, LENGTH));
    }

    /**
     * @return the request's status: a failed request must never be reported complete.
     */
    private int await(final TransferRequest request)
    {
        final long batch = hostInitiator.allocateBatch(1);
        try
        {
            hostInitiator.submitTransfer(batch, request);
            hostInitiator.awaitBatch(batch, WAIT.toMillis());
            return hostInitiator.getTransferStatus(batch, 0).status();
        }
        finally
        {
            hostInitiator.freeBatch(batch);
        }
    }

    private static void assertStatus(final int status, final String expected)
    {
        assertThat(TransferStatus.name(status)).isEqualTo(expected);
    }

    private static void assertLanded(final MemorySegment memory, final long offset, final long seed)
    {
        assertThat(SystemTests.firstMismatch(memory, offset, SystemTests.randomBytes(seed, LENGTH), 0, LENGTH))
            .as("first byte that differs").isEqualTo(-1);
    }

    private static void registerGpu(final RawControlSession owner, final MemorySegment allocation)
    {
        assertOk(owner.request(frame -> new GpuMemoryRegistration(1, GPU_POINTER, REGION, 0,
            HostBackedDeviceMemory.handleOf(allocation), "", "cuda:0").encode(frame), WAIT));
    }

    private static long open(final RawControlSession session, final long correlationId, final String name)
    {
        final ControlFrame opened = session.request(frame -> frame.begin(ControlMessages.OPEN_SEGMENT)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putString(ControlMessages.OPEN_SEGMENT_NAME, name), WAIT);
        assertOk(opened);
        return opened.getLong(ControlMessages.OK_VALUE);
    }

    private static void assertOk(final ControlFrame answer)
    {
        assertThat(answer.type())
            .as(() -> answer.type() == ControlMessages.ERROR ? answer.getString(ControlMessages.ERROR_MESSAGE) : "")
            .isEqualTo(ControlMessages.OK);
    }
}
