package io.xferd.daemon.control;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.ipc.ControlError;
import io.xferd.nativebindings.libc.MappedMemory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Registering a client's ordinary memory proves the daemon can reach it (first and last byte) before saying yes:
 * a range not mapped in the client, a process that is gone, a location that is not host memory or a bad range is
 * refused with its typed error, and nothing is held for an accepted one.
 */
@Timeout(10)
class ProcessRegionMapperTest
{
    private static final int PID = (int)ProcessHandle.current().pid();

    private final ProcessRegionMapper mapper = new ProcessRegionMapper();

    @Test
    void shouldRegisterReachableMemoryOfTheClientByItsOwnAddress()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment heap = arena.allocate(10_000);

            final Region region = mapper.map(PID, heap.address(), 10_000, "cpu:0");

            assertThat(region.isProcess()).isTrue();
            assertThat(region.pid()).isEqualTo(PID);
            assertThat(region.ownerAddress()).isEqualTo(heap.address());
            assertThat(region.length()).isEqualTo(10_000);
            assertThat(region.location()).isEqualTo("cpu:0");
            assertThat(mapper.map(PID, heap.address(), 1, "*").length()).isEqualTo(1);
        }
    }

    @Test
    void shouldRefuseARangeWhoseEndIsNotMappedInTheClient()
    {
        final MemorySegment pages = MappedMemory.mapAnonymous(2 * 4096);
        MappedMemory.unmap(pages.asSlice(4096, 4096));
        try
        {
            assertRefused(() -> mapper.map(PID, pages.address(), 2 * 4096, "cpu:0"), ControlError.INVALID_ARGUMENT,
                "is not mapped readable in process " + PID);
            assertThat(mapper.map(PID, pages.address(), 4096, "cpu:0").length()).isEqualTo(4096);
        }
        finally
        {
            MappedMemory.unmap(pages.asSlice(0, 4096));
        }
    }

    @Test
    void shouldRefuseTheMemoryOfAProcessThatIsGone()
    {
        assertRefused(() -> mapper.map(Integer.MAX_VALUE, 0x10000, 4096, "cpu:0"), ControlError.MAP_FAILED, "ESRCH");
        assertRefused(() -> mapper.map(0, 0x10000, 4096, "cpu:0"), ControlError.MAP_FAILED, "pid is unknown");
    }

    @Test
    void shouldRefuseBadRangesAndLocationsThatAreNotHostMemory()
    {
        assertRefused(() -> mapper.map(PID, 0, 4096, "cpu:0"), ControlError.INVALID_ARGUMENT, "bad range");
        assertRefused(() -> mapper.map(PID, 4096, 0, "cpu:0"), ControlError.INVALID_ARGUMENT, "bad range");
        assertRefused(() -> mapper.map(PID, Long.MAX_VALUE - 10, 4096, "cpu:0"), ControlError.INVALID_ARGUMENT,
            "bad range");
        assertRefused(() -> mapper.map(PID, 4096, 4096, "cuda:0"), ControlError.INVALID_ARGUMENT, "not cuda:0");
        assertThat(ProcessRegionMapper.isHostLocation("*")).isTrue();
        assertThat(ProcessRegionMapper.isHostLocation("cpu:12")).isTrue();
        assertThat(ProcessRegionMapper.isHostLocation("cpu:")).isFalse();
        assertThat(ProcessRegionMapper.isHostLocation("cpu:1x")).isFalse();
        assertThat(ProcessRegionMapper.isHostLocation("cpu:\u0661")).isFalse();
        assertThat(ProcessRegionMapper.isHostLocation("")).isFalse();
    }

    private static void assertRefused(final Runnable registration, final int code, final String reason)
    {
        assertThatThrownBy(registration::run).isInstanceOfSatisfying(RegistrationRefusedException.class, ex ->
        {
            assertThat(ex.code()).isEqualTo(code);
            assertThat(ex.getMessage()).contains(reason);
        });
    }
}
