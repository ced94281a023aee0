package io.xferd.daemon.control;

import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.nativebindings.Availability;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A CUDA IPC handle is opened once per allocation however many of its ranges are registered, on the device the
 * client named, and closed when the last of them is freed; every failure is a typed refusal.
 */
@Timeout(10)
class GpuRegionMapperTest
{
    private final FakeDeviceMemory device = new FakeDeviceMemory();
    private final GpuRegionMapper mapper = new GpuRegionMapper(device);

    private static byte[] handle(final int id)
    {
        final byte[] handle = new byte[64];
        handle[0] = (byte)id;
        return handle;
    }

    private static GpuMemoryRegistration range(final long pointer, final long offset, final int handleId,
        final String pciBusId, final String location)
    {
        return new GpuMemoryRegistration(1, pointer, 4096, offset, handle(handleId), pciBusId, location);
    }

    @Test
    void shouldOpenAHandleOnceForAllItsRangesAndCloseItAfterTheLast()
    {
        final Region first = mapper.map(range(0x1000, 0, 1, "", "cuda:0"));
        final Region second = mapper.map(range(0x3000, 0x2000, 1, "", "cuda:0"));
        final Region other = mapper.map(range(0x9000, 0, 2, "", "cuda:1"));

        assertThat(device.calls).containsExactly("open 0 handle 1", "open 1 handle 2");
        assertThat(second.daemonAddress(0x3000)).isEqualTo(FakeDeviceMemory.BASE + 0x2000);
        assertThat(mapper.openAllocations()).isEqualTo(2);

        mapper.unmap(first);
        assertThat(device.calls).hasSize(2);
        mapper.unmap(second);
        mapper.unmap(other);
        assertThat(device.calls).containsExactly("open 0 handle 1", "open 1 handle 2", "close 0", "close 1");
        assertThat(mapper.openAllocations()).isZero();
    }

    @Test
    void shouldRefuseARangeBeyondItsAllocationAndCloseTheHandleNothingElseUses()
    {
        device.allocationSize = 0x4000;

        final Region inside = mapper.map(range(0x1000, 0x3000, 1, "", "cuda:0"));
        assertThatThrownBy(() -> mapper.map(range(0x2000, 0x3001, 1, "", "cuda:0")))
            .isInstanceOfSatisfying(RegistrationRefusedException.class,
                e -> assertThat(e.code()).isEqualTo(ControlError.INVALID_ARGUMENT))
            .hasMessageContaining("ends beyond its allocation of 16384 bytes");
        assertThatThrownBy(() -> mapper.map(range(0x9000, 0x4000, 2, "", "cuda:0")))
            .isInstanceOf(RegistrationRefusedException.class);

        assertThat(device.calls).as("the refused handle 2 closed at once; handle 1 kept for its range")
            .containsExactly("open 0 handle 1", "open 0 handle 2", "close 0");
        mapper.unmap(inside);
        assertThat(device.calls).hasSize(4);
        assertThat(mapper.openAllocations()).isZero();
    }

    @Test
    void shouldFindTheDeviceByPciBusIdOverTheLocationsOrdinal()
    {
        final Region region = mapper.map(range(0x1000, 0, 1, "0000:99:00.0", "cuda:0"));

        assertThat(region.device()).isEqualTo(1);
        assertThat(region.location()).as("the daemon's numbering, not the client's").isEqualTo("cuda:1");
    }

    @Test
    void shouldRefuseTypedWhenTheRuntimeIsUnavailable()
    {
        device.availability = Availability.unavailable("libcudart", "cannot load libcudart.so");

        assertThatThrownBy(() -> mapper.map(range(0x1000, 0, 1, "", "cuda:0")))
            .isInstanceOfSatisfying(RegistrationRefusedException.class,
                e -> assertThat(e.code()).isEqualTo(ControlError.CUDA_UNAVAILABLE))
            .hasMessageContaining("cannot load libcudart.so");
        assertThat(device.calls).isEmpty();
    }

    @Test
    void shouldRefuseAnUnknownDeviceOrAHandleThatDoesNotOpenAsMapFailed()
    {
        assertThatThrownBy(() -> mapper.map(range(0x1000, 0, 1, "0000:42:00.0", "cuda:0")))
            .isInstanceOfSatisfying(RegistrationRefusedException.class,
                e -> assertThat(e.code()).isEqualTo(ControlError.MAP_FAILED));
        assertThatThrownBy(() -> mapper.map(range(0x1000, 0, 1, "", "cuda:2")))
            .isInstanceOfSatisfying(RegistrationRefusedException.class,
                e -> assertThat(e.code()).isEqualTo(ControlError.MAP_FAILED))
            .hasMessageContaining("sees 2 CUDA devices");
        device.failOpen = true;
        assertThatThrownBy(() -> mapper.map(range(0x1000, 0, 1, "", "cuda:0")))
            .isInstanceOfSatisfying(RegistrationRefusedException.class,
                e -> assertThat(e.code()).isEqualTo(ControlError.MAP_FAILED))
            .hasMessageContaining("cudaErrorInvalidResourceHandle");
        assertThat(mapper.openAllocations()).isZero();
    }

    static final class FakeDeviceMemory implements DeviceMemory
    {
        static final long BASE = 0x5000_0000_0000L;

        final List<String> calls = new ArrayList<>();
        Availability availability = Availability.available("fake");
        boolean failOpen;
        long allocationSize = -1;

        @Override
        public Availability availability()
        {
            return availability;
        }

        @Override
        public int deviceCount()
        {
            return 2;
        }

        @Override
        public int deviceOf(final String pciBusId)
        {
            return pciBusId.equals("0000:99:00.0") ? 1 : -1;
        }

        @Override
        public long open(final int device, final byte[] ipcHandle)
        {
            if (failOpen)
            {
                throw new IllegalStateException("cudaIpcOpenMemHandle failed: cudaErrorInvalidResourceHandle (400)");
            }
            calls.add("open " + device + " handle " + ipcHandle[0]);
            return BASE;
        }

        @Override
        public void close(final int device, final long baseAddress)
        {
            calls.add("close " + device);
        }

        @Override
        public long allocationSize(final int device, final long baseAddress)
        {
            return allocationSize;
        }

        @Override
        public void copy(final int device, final long destination, final long source, final long length)
        {
            throw new UnsupportedOperationException();
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
