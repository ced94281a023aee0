package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.DeviceAllocation;
import io.xferd.daemon.memory.Region;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local copies with a client's process memory on one or both sides (reached with process_vm_readv/writev on its
 * pid, here this JVM's own, which the kernel always permits): against a mapping in one call, between two process
 * regions and between process and GPU memory a bounce-buffer chunk at a time (a bounce of 1000 bytes, so a request
 * is several chunks, the last short), and a range the owner unmapped fails that request with MEMORY_FAULT.
 */
@Timeout(10)
class ProcessRegionCopierTest
{
    private static final int PID = (int)ProcessHandle.current().pid();
    private static final int BOUNCE = 1000;
    private static final int LENGTH = 4 * BOUNCE + 123;

    private final Arena arena = Arena.ofConfined();
    private final RegionCopierTest.RecordingDeviceMemory device = new RegionCopierTest.RecordingDeviceMemory();
    private final RegionCopier copier = new RegionCopier(device, BOUNCE);

    @AfterEach
    void close()
    {
        arena.close();
    }

    /**
     * Memory of "the client": the region is named by the memory's own address, as a client registers it.
     */
    private MemorySegment processMemory(final long seed)
    {
        final MemorySegment memory = arena.allocate(8192, 8);
        fill(memory, seed);
        return memory;
    }

    private static Region processRegion(final MemorySegment memory)
    {
        return Region.inProcess(memory.address(), memory.byteSize(), "cpu:0", PID);
    }

    private Region mappedRegion(final long ownerAddress, final long seed)
    {
        final MemorySegment memory = arena.allocate(8192, 8);
        fill(memory, seed);
        return new Region(ownerAddress, 8192, "cpu:0", memory, memory);
    }

    @Test
    void shouldWriteFromAMappingIntoProcessMemoryInOneCall()
    {
        final Region local = mappedRegion(0x10_0000L, 1);
        final MemorySegment client = processMemory(0);

        assertThat(copier.copy(Opcode.WRITE, local, 0x10_0000L + 7, processRegion(client), client.address() + 100,
            LENGTH)).isEqualTo(TransferStatus.OK);

        assertThat(client.asSlice(100, LENGTH).mismatch(local.mapping().asSlice(7, LENGTH))).isEqualTo(-1);
        assertThat(client.get(ValueLayout.JAVA_BYTE, 99)).isEqualTo(pattern(0, 99));
        assertThat(client.get(ValueLayout.JAVA_BYTE, 100 + LENGTH)).isEqualTo(pattern(0, 100 + LENGTH));
        assertThat(device.copies).isEmpty();
    }

    @Test
    void shouldReadProcessMemoryIntoAMapping()
    {
        final Region local = mappedRegion(0x10_0000L, 2);
        final MemorySegment client = processMemory(3);

        assertThat(copier.copy(Opcode.READ, local, 0x10_0000L, processRegion(client), client.address() + 1, LENGTH))
            .isEqualTo(TransferStatus.OK);

        assertThat(local.mapping().asSlice(0, LENGTH).mismatch(client.asSlice(1, LENGTH))).isEqualTo(-1);
    }

    @Test
    void shouldCopyBetweenTwoProcessRegionsThroughTheBounceBuffer()
    {
        final MemorySegment source = processMemory(4);
        final MemorySegment destination = processMemory(5);
        final byte[] expected = source.asSlice(3, LENGTH).toArray(ValueLayout.JAVA_BYTE);

        assertThat(copier.copy(Opcode.WRITE, processRegion(source), source.address() + 3, processRegion(destination),
            destination.address() + 11, LENGTH)).isEqualTo(TransferStatus.OK);

        assertThat(destination.asSlice(11, LENGTH).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
        assertThat(destination.get(ValueLayout.JAVA_BYTE, 10)).isEqualTo(pattern(5, 10));
        assertThat(destination.get(ValueLayout.JAVA_BYTE, 11 + LENGTH)).isEqualTo(pattern(5, 11 + LENGTH));
    }

    @Test
    void shouldCopyBetweenProcessAndGpuMemoryThroughTheBounceBufferOnTheGpusDevice()
    {
        device.copyBytes = true;
        final MemorySegment gpuBytes = arena.allocate(8192, 8);
        final Region gpu = Region.onDevice(0x7f00_0000_0000L, 8192, "cuda:2",
            new DeviceAllocation("handle", 2, gpuBytes.address(), -1), 0);
        final MemorySegment client = processMemory(6);

        assertThat(copier.copy(Opcode.WRITE, processRegion(client), client.address(), gpu, 0x7f00_0000_0000L + 64,
            LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(gpuBytes.asSlice(64, LENGTH).mismatch(client.asSlice(0, LENGTH))).isEqualTo(-1);
        assertThat(device.copies).hasSize(5).allMatch(copy -> copy.device() == 2);

        fill(gpuBytes, 7);
        assertThat(copier.copy(Opcode.READ, processRegion(client), client.address() + 9, gpu, 0x7f00_0000_0000L,
            LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(client.asSlice(9, LENGTH).mismatch(gpuBytes.asSlice(0, LENGTH))).isEqualTo(-1);
    }

    @Test
    void shouldFailOnlyTheRequestWithMemoryFaultWhenTheOwnerUnmappedItsMemory()
    {
        final MemorySegment anonymous = MappedMemory.mapAnonymous(3 * 4096);
        final Region client = Region.inProcess(anonymous.address(), 3 * 4096, "cpu:0", PID);
        final Region local = mappedRegion(0x10_0000L, 8);
        MappedMemory.unmap(anonymous.asSlice(4096, 4096));
        try
        {
            assertThat(copier.copy(Opcode.WRITE, local, 0x10_0000L, client, anonymous.address() + 4000, 200))
                .as("a write reaching the hole").isEqualTo(TransferStatus.MEMORY_FAULT);
            assertThat(copier.copy(Opcode.READ, local, 0x10_0000L, client, anonymous.address() + 8192, 200))
                .as("a read of the pages left").isEqualTo(TransferStatus.OK);
            final MemorySegment other = processMemory(9);
            assertThat(copier.copy(Opcode.WRITE, processRegion(other), other.address(), client,
                anonymous.address() + 4096, 200)).isEqualTo(TransferStatus.MEMORY_FAULT);
            assertThat(copier.copy(Opcode.WRITE, Region.inProcess(0x1000, 8192, "cpu:0", Integer.MAX_VALUE), 0x1000,
                local, 0x10_0000L, 100)).as("a process that is gone").isEqualTo(TransferStatus.MEMORY_FAULT);
        }
        finally
        {
            MappedMemory.unmap(anonymous.asSlice(0, 4096));
            MappedMemory.unmap(anonymous.asSlice(8192, 4096));
        }
    }

    @Test
    void shouldDescribeProcessRegionsAsNeitherMappedNorDevice()
    {
        final Region region = Region.inProcess(0x4000, 100, "cpu:1", PID);

        assertThat(region.isProcess()).isTrue();
        assertThat(region.isMapped()).isFalse();
        assertThat(region.isDevice()).isFalse();
        assertThat(region.pid()).isEqualTo(PID);
        assertThat(region.mapping().byteSize()).as("no mapping path can touch it").isZero();
        assertThat(mappedRegion(0x10_0000L, 0).isMapped()).isTrue();
    }

    private static void fill(final MemorySegment memory, final long seed)
    {
        for (int i = 0; i < memory.byteSize(); i++)
        {
            memory.set(ValueLayout.JAVA_BYTE, i, pattern(seed, i));
        }
    }

    private static byte pattern(final long seed, final long index)
    {
        return (byte)new SplittableRandom(seed * 1_000_003L + index).nextInt();
    }
}
