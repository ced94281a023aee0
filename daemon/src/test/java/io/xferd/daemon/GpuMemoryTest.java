package io.xferd.daemon;

import io.xferd.client.CudaUnavailableException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.cuda.CudaRuntime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * GPU memory handed to the daemon through a CUDA IPC handle (REGISTER_GPU_MEMORY). On this host class: without
 * CUDA every refusal is typed and nobody is disconnected; with {@link HostBackedDeviceMemory} standing in for the
 * CUDA runtime, the daemon's GPU path (registration, copies through the device runtime, handle refcounts) runs end
 * to end; {@link GpuOverTcpTest} covers GPU memory between daemons. Real GPUs are checked by
 * daemon/src/test/gpu/run-gpu-transfer.sh.
 */
@Tag("integration")
@Timeout(60)
class GpuMemoryTest
{
    private static final int LENGTH = 256 * 1024;
    private static final long GPU_POINTER = 0x7f00_0000_0000L;

    private final Path directory = SystemTests.newDaemonDirectory();
    private final Arena arena = Arena.ofShared();
    private XferDaemon daemon;

    @AfterEach
    void tearDown()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        arena.close();
        SystemTests.deleteRecursively(directory);
    }

    private static GpuMemoryRegistration gpuRange(
        final long correlationId, final long pointer, final long length, final long offset, final byte[] handle)
    {
        return new GpuMemoryRegistration(correlationId, pointer, length, offset, handle, "", "cuda:0");
    }

    private static int errorCode(final ControlFrame answer)
    {
        assertThat(answer.type()).as("answer type").isEqualTo(ControlMessages.ERROR);
        return answer.getInt(ControlMessages.ERROR_CODE);
    }

    private static void assertOk(final ControlFrame answer)
    {
        assertThat(answer.type())
            .as(() -> answer.type() == ControlMessages.ERROR ? answer.getString(ControlMessages.ERROR_MESSAGE) : "")
            .isEqualTo(ControlMessages.OK);
    }

    @Test
    void shouldAnswerCudaUnavailableWhenTheDaemonHasNoCudaAndKeepServingEveryone()
    {
        assumeFalse(CudaRuntime.availability().isAvailable(), "this host has a CUDA device");
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        try (RawControlSession gpuClient = RawControlSession.hello(directory, "gpu-client", WAIT);
            XferClient other = XferClient.connect(SystemTests.clientContext(directory, "other")))
        {
            final ControlFrame answer = gpuClient.request(
                frame -> gpuRange(7, GPU_POINTER, LENGTH, 0, new byte[64]).encode(frame), WAIT);

            assertThat(answer.getLong(ControlMessages.CORRELATION_ID)).isEqualTo(7);
            assertThat(ControlError.name(errorCode(answer))).isEqualTo("CUDA_UNAVAILABLE");
            assertThat(answer.getString(ControlMessages.ERROR_MESSAGE))
                .startsWith("this daemon cannot serve GPU memory: libcudart: unavailable (");

            // the same connection goes on: a second refusal is answered the same, and it can open a segment
            assertThat(ControlError.name(errorCode(gpuClient.request(
                frame -> gpuRange(8, GPU_POINTER, LENGTH, 0, new byte[64]).encode(frame), WAIT))))
                .isEqualTo("CUDA_UNAVAILABLE");
            assertOk(gpuClient.request(frame -> frame.begin(ControlMessages.OPEN_SEGMENT)
                .putLong(ControlMessages.CORRELATION_ID, 9).putString(ControlMessages.OPEN_SEGMENT_NAME, "other"), WAIT));

            assertHostTransfersWork(other);
            assertThat(gpuClient.isOpenedByDaemon()).isTrue();
            assertThat(counter(daemon, SystemCounter.CLIENTS_DISCONNECTED)).isZero();
            assertThat(counter(daemon, SystemCounter.REGIONS_REGISTERED)).isEqualTo(1);
        }
    }

    @Test
    void shouldAnswerMalformedMessageToAFrameOfTheWrongLengthAndKeepTheConnection()
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).deviceMemory(new HostBackedDeviceMemory()));
        try (RawControlSession gpuClient = RawControlSession.hello(directory, "gpu-client", WAIT))
        {
            final ControlFrame cutShort = gpuClient.request(frame -> frame.begin(ControlMessages.REGISTER_GPU_MEMORY)
                .putLong(ControlMessages.CORRELATION_ID, 3)
                .putLong(ControlMessages.REGISTER_GPU_POINTER, GPU_POINTER)
                .putLong(ControlMessages.REGISTER_GPU_LENGTH, LENGTH), WAIT);
            assertThat(ControlError.name(errorCode(cutShort))).isEqualTo("MALFORMED_MESSAGE");
            assertThat(cutShort.getLong(ControlMessages.CORRELATION_ID)).isEqualTo(3);

            final ControlFrame trailing = gpuClient.request(frame ->
            {
                gpuRange(4, GPU_POINTER, LENGTH, 0, new byte[64]).encode(frame);
                frame.putLong(frame.length() - ControlFrame.HEADER_LENGTH, 0xBAD);
            }, WAIT);
            assertThat(ControlError.name(errorCode(trailing))).isEqualTo("MALFORMED_MESSAGE");
            assertThat(trailing.getString(ControlMessages.ERROR_MESSAGE)).contains("its layout says");

            final ControlFrame notCuda = gpuClient.request(frame -> new GpuMemoryRegistration(5, GPU_POINTER, LENGTH,
                0, new byte[64], "", "cpu:0").encode(frame), WAIT);
            assertThat(ControlError.name(errorCode(notCuda))).isEqualTo("INVALID_ARGUMENT");

            final ControlFrame unknownPci = gpuClient.request(frame -> new GpuMemoryRegistration(6, GPU_POINTER,
                LENGTH, 0, new byte[64], "0000:42:00.0", "cuda:0").encode(frame), WAIT);
            assertThat(ControlError.name(errorCode(unknownPci))).isEqualTo("MAP_FAILED");
            assertThat(unknownPci.getString(ControlMessages.ERROR_MESSAGE)).contains("0000:42:00.0");

            assertThat(gpuClient.isOpenedByDaemon()).isTrue();
            assertThat(counter(daemon, SystemCounter.CLIENTS_DISCONNECTED)).isZero();
            assertThat(counter(daemon, SystemCounter.REGIONS_REGISTERED)).isZero();
        }
    }

    @Test
    void shouldRefuseGpuMemoryInAClientWithoutCudaBeforeAskingTheDaemon()
    {
        assumeFalse(CudaRuntime.availability().isAvailable(), "this host has a CUDA device");
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        try (XferClient client = XferClient.connect(SystemTests.clientContext(directory, "client")))
        {
            assertThatThrownBy(() -> client.registerGpuMemory(GPU_POINTER, LENGTH, "cuda:0"))
                .isInstanceOf(CudaUnavailableException.class)
                .hasMessageStartingWith("cannot register GPU memory: CUDA is not available in this process (")
                .hasMessageContaining("libcudart");
            // Mooncake's spelling: registerLocalMemory(ptr, len, "cuda:0") with memory not from allocateMemory
            assertThatThrownBy(() -> client.registerMemory(GPU_POINTER, LENGTH, "cuda:0"))
                .isInstanceOf(CudaUnavailableException.class);
            assertThatThrownBy(() -> client.registerGpuMemory(GPU_POINTER, LENGTH, "cpu:0"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cuda:N");

            assertHostTransfersWork(client);
        }
    }

    @Test
    void shouldCopyBetweenHostAndGpuMemoryThroughTheDeviceRuntimeAndCloseTheHandleOnce()
    {
        final HostBackedDeviceMemory gpu = new HostBackedDeviceMemory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).deviceMemory(gpu));
        final MemorySegment allocation = arena.allocate(2 * LENGTH, 4096);
        try (RawControlSession owner = RawControlSession.hello(directory, "gpu-owner", WAIT);
            XferClient host = XferClient.connect(SystemTests.clientContext(directory, "host")))
        {
            final byte[] handle = HostBackedDeviceMemory.handleOf(allocation);
            // two ranges of one allocation, the second an interior pointer: one open of the handle
            assertOk(owner.request(frame -> gpuRange(1, GPU_POINTER, LENGTH, 0, handle).encode(frame), WAIT));
            assertOk(owner.request(frame -> new GpuMemoryRegistration(2, GPU_POINTER + LENGTH, LENGTH, LENGTH, handle,
                HostBackedDeviceMemory.PCI_BUS_IDS[0], "cuda:0").encode(frame), WAIT));
            assertThat(gpu.calls).containsExactly("open device 0");
            assertThat(ControlError.name(errorCode(owner.request(
                frame -> gpuRange(3, GPU_POINTER + 4096, 4096, 4096, handle).encode(frame), WAIT))))
                .isEqualTo("OVERLAPPING_REGION");
            final ControlFrame beyond = owner.request(frame -> gpuRange(3, GPU_POINTER + 4L * LENGTH, 8192,
                2L * LENGTH - 4096, handle).encode(frame), WAIT);
            assertThat(ControlError.name(errorCode(beyond))).isEqualTo("INVALID_ARGUMENT");
            assertThat(beyond.getString(ControlMessages.ERROR_MESSAGE)).contains("ends beyond its allocation");
            assertThat(gpu.calls).containsExactly("open device 0");

            final SharedBuffer local = host.allocateMemory(2 * LENGTH);
            SystemTests.fill(local.segment().asSlice(0, LENGTH), 17);
            host.registerMemory(local, "cpu:0");
            final long segment = host.openSegment("gpu-owner");

            final byte[] expected = SystemTests.randomBytes(17, LENGTH);
            host.transferSyncWrite(segment, local.address(), GPU_POINTER + LENGTH, LENGTH);
            assertThat(SystemTests.firstMismatch(allocation, LENGTH, expected, 0, LENGTH))
                .as("host -> GPU: the interior range lands at its offset in the allocation").isEqualTo(-1);
            host.transferSyncWrite(segment, local.address(), GPU_POINTER + 4096, 8192);
            assertThat(SystemTests.firstMismatch(allocation, 4096, expected, 0, 8192)).isEqualTo(-1);
            host.transferSyncRead(segment, local.address() + LENGTH, GPU_POINTER + LENGTH + LENGTH / 2, LENGTH / 2);
            assertThat(SystemTests.firstMismatch(local.segment(), LENGTH, expected, LENGTH / 2, LENGTH / 2))
                .as("GPU -> host").isEqualTo(-1);
            assertThat(gpu.copies.get()).isEqualTo(3);

            // GPU to GPU inside one segment: the first range's bytes to the second's
            SystemTests.fill(allocation.asSlice(0, LENGTH), 29);
            assertThat(TransferStatus.name(owner.submitAndAwait(Opcode.WRITE, owner.segmentHandle(), GPU_POINTER,
                GPU_POINTER + LENGTH, LENGTH, WAIT))).isEqualTo("OK");
            assertThat(SystemTests.firstMismatch(allocation, LENGTH, SystemTests.randomBytes(29, LENGTH), 0, LENGTH))
                .isEqualTo(-1);
            assertThat(gpu.copies.get()).isEqualTo(4);

            gpu.failCopies = true;
            final long batch = host.allocateBatch(1);
            host.submitTransfer(batch, TransferRequest.write(local.address(), segment, GPU_POINTER, 4096));
            assertThat(host.awaitBatch(batch, WAIT.toMillis())).isFalse();
            assertThat(TransferStatus.name(host.getTransferStatus(batch, 0).status())).isEqualTo("TRANSPORT_ERROR");
            host.freeBatch(batch);
            gpu.failCopies = false;

            assertOk(owner.request(frame -> frame.begin(ControlMessages.UNREGISTER_MEMORY)
                .putLong(ControlMessages.CORRELATION_ID, 4).putLong(ControlMessages.UNREGISTER_ADDRESS, GPU_POINTER),
                WAIT));
            assertThat(gpu.calls).as("the second range still uses the allocation").containsExactly("open device 0");
            assertOk(owner.request(frame -> frame.begin(ControlMessages.UNREGISTER_MEMORY)
                .putLong(ControlMessages.CORRELATION_ID, 5)
                .putLong(ControlMessages.UNREGISTER_ADDRESS, GPU_POINTER + LENGTH), WAIT));
            assertThat(gpu.calls).containsExactly("open device 0",
                "close device 0 0x" + Long.toHexString(allocation.address()));

            assertHostTransfersWork(host);
        }
    }

    /**
     * GPU memory <-> a file region, the device runtime stood in for by host memory: the worker reads the file into
     * its bounce buffer and copies that to the device (and back the other way), every byte checked in the file and
     * in the "device" allocation. What a real GPU adds (cudaMemcpy, pinned staging) is not exercised here.
     */
    @Test
    void shouldMoveBytesBetweenGpuMemoryAndAFileThroughTheBounceBuffer() throws Exception
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.xferd.nativebindings.libc.IoUring.isAvailable(),
            "io_uring not available here");
        final HostBackedDeviceMemory gpu = new HostBackedDeviceMemory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).deviceMemory(gpu));
        final MemorySegment allocation = arena.allocate(LENGTH, 4096);
        final Path file = java.nio.file.Files.createTempFile(Path.of(System.getProperty("java.io.tmpdir")),
            "xferd-gpu-file", ".bin");
        try (RawControlSession owner = RawControlSession.hello(directory, "gpu-owner", WAIT);
            XferClient host = XferClient.connect(SystemTests.clientContext(directory, "host")))
        {
            java.nio.file.Files.write(file, SystemTests.randomBytes(41, 2 * LENGTH));
            assertOk(owner.request(frame -> gpuRange(1, GPU_POINTER, LENGTH, 0,
                HostBackedDeviceMemory.handleOf(allocation)).encode(frame), WAIT));
            final long fileAddress = host.registerFile(file, 0, 2 * LENGTH, 0);
            final long segment = host.openSegment("gpu-owner");

            // file -> GPU: a WRITE from the host's file region into the GPU range, at unaligned offsets
            host.transferSyncWrite(segment, fileAddress + LENGTH + 100, GPU_POINTER + 12, LENGTH - 4096);
            assertThat(SystemTests.firstMismatch(allocation, 12, SystemTests.randomBytes(41, 2 * LENGTH),
                LENGTH + 100, LENGTH - 4096)).isEqualTo(-1);

            // GPU -> file: a READ from the GPU range into the file region
            SystemTests.fill(allocation, 43);
            host.transferSyncRead(segment, fileAddress, GPU_POINTER, LENGTH);
            final byte[] bytes = java.nio.file.Files.readAllBytes(file);
            assertThat(java.util.Arrays.copyOf(bytes, LENGTH)).isEqualTo(SystemTests.randomBytes(43, LENGTH));
            assertThat(java.util.Arrays.copyOfRange(bytes, LENGTH, 2 * LENGTH)).as("the rest of the file untouched")
                .isEqualTo(java.util.Arrays.copyOfRange(SystemTests.randomBytes(41, 2 * LENGTH), LENGTH, 2 * LENGTH));
            assertThat(gpu.copies.get()).as("device copies, one per bounce chunk at least").isGreaterThanOrEqualTo(2);
        }
        finally
        {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    /**
     * GPU memory <-> a file region over several bounce chunks: through the two halves of a pinned buffer, each
     * chunk's device copy started and waited for only once the other half's file operation is done. The stand-in
     * moves a started copy's bytes only when the worker waits for it, so a half reused too early, or a copy never
     * waited for, shows in the bytes.
     */
    @Test
    void shouldMoveBytesOfManyChunksBetweenGpuMemoryAndAFileThroughTwoPinnedHalves() throws Exception
    {
        final HostBackedDeviceMemory gpu = new HostBackedDeviceMemory();
        gpu.deferCopies = true;
        moveManyChunksBetweenGpuAndFile(gpu);
        assertThat(gpu.pinnedAllocations.get()).as("one pinned pair of halves for the worker, kept").isEqualTo(1);
        assertThat(gpu.startedCopies.get()).as("device copies overlapped with file operations")
            .isGreaterThanOrEqualTo(6);
    }

    /**
     * Where the runtime refuses page-locked memory, GPU <-> file still moves every byte, one chunk at a time
     * through the pageable bounce buffer.
     */
    @Test
    void shouldMoveBytesBetweenGpuMemoryAndAFileThroughPageableMemoryWhenPinningIsRefused() throws Exception
    {
        final HostBackedDeviceMemory gpu = new HostBackedDeviceMemory();
        gpu.failPinned = true;
        moveManyChunksBetweenGpuAndFile(gpu);
        assertThat(gpu.pinnedAllocations.get()).isZero();
        assertThat(gpu.startedCopies.get()).as("no copy left running").isZero();
    }

    private void moveManyChunksBetweenGpuAndFile(final HostBackedDeviceMemory gpu) throws Exception
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.xferd.nativebindings.libc.IoUring.isAvailable(),
            "io_uring not available here");
        final int length = 3 * (1 << 20) + 8192; // four bounce chunks, the last short
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).deviceMemory(gpu));
        final MemorySegment allocation = arena.allocate(length, 4096);
        final Path file = java.nio.file.Files.createTempFile(Path.of(System.getProperty("java.io.tmpdir")),
            "xferd-gpu-file", ".bin");
        try (RawControlSession owner = RawControlSession.hello(directory, "gpu-owner", WAIT);
            XferClient host = XferClient.connect(SystemTests.clientContext(directory, "host")))
        {
            final byte[] content = SystemTests.randomBytes(47, 2 * length);
            java.nio.file.Files.write(file, content);
            assertOk(owner.request(frame -> gpuRange(1, GPU_POINTER, length, 0,
                HostBackedDeviceMemory.handleOf(allocation)).encode(frame), WAIT));
            final long fileAddress = host.registerFile(file, 0, 2L * length, 0);
            final long segment = host.openSegment("gpu-owner");

            // file -> GPU, unaligned on both sides
            host.transferSyncWrite(segment, fileAddress + length + 100, GPU_POINTER + 12, length - 4096);
            assertThat(SystemTests.firstMismatch(allocation, 12, content, length + 100, length - 4096))
                .as("file -> GPU: first mismatching byte").isEqualTo(-1);

            // GPU -> file, the whole range
            SystemTests.fill(allocation, 53);
            host.transferSyncRead(segment, fileAddress + 4096, GPU_POINTER, length - 8192);
            final byte[] bytes = java.nio.file.Files.readAllBytes(file);
            assertThat(java.util.Arrays.copyOfRange(bytes, 4096, length - 4096))
                .isEqualTo(java.util.Arrays.copyOf(SystemTests.randomBytes(53, length), length - 8192));
            assertThat(java.util.Arrays.copyOf(bytes, 4096)).as("the bytes before it untouched")
                .isEqualTo(java.util.Arrays.copyOf(content, 4096));
            assertThat(java.util.Arrays.copyOfRange(bytes, length - 4096, 2 * length)).as("the rest untouched")
                .isEqualTo(java.util.Arrays.copyOfRange(content, length - 4096, 2 * length));
        }
        finally
        {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldCloseTheHandlesOfAClientThatDisconnects()
    {
        final HostBackedDeviceMemory gpu = new HostBackedDeviceMemory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).deviceMemory(gpu));
        final MemorySegment allocation = arena.allocate(LENGTH, 4096);
        try (RawControlSession owner = RawControlSession.hello(directory, "gpu-owner", WAIT))
        {
            assertOk(owner.request(frame -> new GpuMemoryRegistration(1, GPU_POINTER, LENGTH, 0,
                HostBackedDeviceMemory.handleOf(allocation), HostBackedDeviceMemory.PCI_BUS_IDS[1], "cuda:0")
                .encode(frame), WAIT));
        }
        SystemTests.awaitCondition(() -> gpu.calls.size() == 2, WAIT, () -> "handle closed: " + gpu.calls);
        assertThat(gpu.calls).as("the PCI bus id picks the daemon's device 1")
            .containsExactly("open device 1", "close device 1 0x" + Long.toHexString(allocation.address()));
        assertThat(counter(daemon, SystemCounter.REGIONS_REGISTERED)).isZero();
        assertThat(counter(daemon, SystemCounter.REGISTERED_BYTES)).isZero();
    }

    /**
     * A host-to-host loop-back transfer through the client's own segment, every byte checked.
     */
    private static void assertHostTransfersWork(final XferClient client)
    {
        final SharedBuffer buffer = client.allocateMemory(2 * LENGTH);
        SystemTests.fill(buffer.segment().asSlice(0, LENGTH), 5);
        client.registerMemory(buffer, "cpu:0");
        client.transferSyncWrite(client.ownSegment(), buffer.address(), buffer.address() + LENGTH, LENGTH);
        assertThat(SystemTests.firstMismatch(buffer.segment(), LENGTH, SystemTests.randomBytes(5, LENGTH), 0, LENGTH))
            .isEqualTo(-1);
        assertThat(client.isDaemonGone()).isFalse();
    }
}
