package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.DeviceAllocation;
import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Availability;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The copy strategy of a local request follows the kinds of its two regions: host to host stays a plain memory
 * copy between the mappings, and any GPU side goes to the device runtime, on the GPU side's device, with the daemon's
 * addresses of both sides.
 */
@Timeout(10)
class RegionCopierTest
{
    private static final long OWNER_HOST = 0x10_0000L;
    private static final long OWNER_GPU = 0x7f00_0000_0000L;
    private static final long DEVICE_BASE = 0x5000_0000_0000L;

    private final Arena arena = Arena.ofConfined();
    private final RecordingDeviceMemory device = new RecordingDeviceMemory();
    private final RegionCopier copier = new RegionCopier(device);

    @AfterEach
    void close()
    {
        arena.close();
    }

    private Region hostRegion(final long ownerAddress, final int fill)
    {
        final MemorySegment memory = arena.allocate(4096);
        memory.fill((byte)fill);
        return new Region(ownerAddress, 4096, "cpu:0", memory, memory);
    }

    private static Region gpuRegion(final int ordinal, final long offsetInAllocation)
    {
        return Region.onDevice(OWNER_GPU, 4096, "cuda:" + ordinal,
            new DeviceAllocation("handle", ordinal, DEVICE_BASE, -1), offsetInAllocation);
    }

    @Test
    void shouldCopyHostToHostBetweenTheMappingsWithoutTheDeviceRuntime()
    {
        final Region local = hostRegion(OWNER_HOST, 7);
        final Region target = hostRegion(0x20_0000L, 0);

        assertThat(copier.copy(Opcode.WRITE, local, OWNER_HOST + 100, target, 0x20_0000L + 200, 50))
            .isEqualTo(TransferStatus.OK);

        assertThat(target.mapping().get(ValueLayout.JAVA_BYTE, 199)).isZero();
        assertThat(target.mapping().asSlice(200, 50).toArray(ValueLayout.JAVA_BYTE)).containsOnly(7);
        assertThat(target.mapping().get(ValueLayout.JAVA_BYTE, 250)).isZero();
        assertThat(device.copies).isEmpty();
    }

    @Test
    void shouldWriteHostToGpuThroughTheDeviceRuntimeOnTheGpusDevice()
    {
        final Region local = hostRegion(OWNER_HOST, 1);
        final Region target = gpuRegion(3, 8192);

        assertThat(copier.copy(Opcode.WRITE, local, OWNER_HOST + 16, target, OWNER_GPU + 32, 64))
            .isEqualTo(TransferStatus.OK);

        assertThat(device.copies).containsExactly(new Copy(3, DEVICE_BASE + 8192 + 32,
            local.mapping().address() + 16, 64));
    }

    @Test
    void shouldReadGpuToHostWithTheSidesSwapped()
    {
        final Region local = hostRegion(OWNER_HOST, 1);
        final Region target = gpuRegion(1, 0);

        copier.copy(Opcode.READ, local, OWNER_HOST, target, OWNER_GPU + 4000, 96);

        assertThat(device.copies).containsExactly(new Copy(1, local.mapping().address(), DEVICE_BASE + 4000, 96));
    }

    @Test
    void shouldIssueAGpuToGpuCopyOnTheDestinationsDevice()
    {
        copier.copy(Opcode.WRITE, gpuRegion(0, 0), OWNER_GPU, gpuRegion(2, 4096), OWNER_GPU + 8, 8);

        assertThat(device.copies).containsExactly(new Copy(2, DEVICE_BASE + 4096 + 8, DEVICE_BASE, 8));
    }

    @Test
    void shouldFailOnlyThisRequestWithTransportErrorWhenTheDeviceCopyFails()
    {
        device.fail = true;

        assertThat(copier.copy(Opcode.WRITE, hostRegion(OWNER_HOST, 1), OWNER_HOST, gpuRegion(0, 0), OWNER_GPU, 8))
            .isEqualTo(TransferStatus.TRANSPORT_ERROR);
        device.fail = false;
        assertThat(copier.copy(Opcode.WRITE, hostRegion(OWNER_HOST, 1), OWNER_HOST, gpuRegion(0, 0), OWNER_GPU, 8))
            .isEqualTo(TransferStatus.OK);
    }

    @Test
    void shouldKeepHostRegionsEmptyOfDeviceStateAndGpuRegionsEmptyOfMappings()
    {
        final Region host = hostRegion(OWNER_HOST, 0);
        final Region gpu = gpuRegion(0, 0);

        assertThat(host.isDevice()).isFalse();
        assertThat(host.device()).isEqualTo(Region.HOST);
        assertThat(gpu.isDevice()).isTrue();
        assertThat(gpu.mapping().byteSize()).as("no host path can touch device memory").isZero();
    }

    record Copy(int device, long destination, long source, long length)
    {
    }

    static final class RecordingDeviceMemory implements DeviceMemory
    {
        final List<Copy> copies = new ArrayList<>();
        boolean fail;
        // move the bytes too (both addresses must then be real memory of this process)
        boolean copyBytes;

        @Override
        public Availability availability()
        {
            return Availability.available("recording");
        }

        @Override
        public int deviceCount()
        {
            return 4;
        }

        @Override
        public int deviceOf(final String pciBusId)
        {
            return -1;
        }

        @Override
        public long open(final int device, final byte[] ipcHandle)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close(final int device, final long baseAddress)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public long allocationSize(final int device, final long baseAddress)
        {
            return -1;
        }

        @Override
        public void copy(final int device, final long destination, final long source, final long length)
        {
            if (fail)
            {
                throw new IllegalStateException("cudaMemcpy failed");
            }
            copies.add(new Copy(device, destination, source, length));
            if (copyBytes)
            {
                MemorySegment.copy(MemorySegment.ofAddress(source).reinterpret(length), 0,
                    MemorySegment.ofAddress(destination).reinterpret(length), 0, length);
            }
        }

        @Override
        public MemorySegment allocatePinned(final long size)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public void freePinned(final MemorySegment pinned)
        {
            throw new UnsupportedOperationException();
        }
    }
}
