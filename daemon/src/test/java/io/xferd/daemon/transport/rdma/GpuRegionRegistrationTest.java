package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.memory.DeviceAllocation;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * GPU memory has no host mapping for the NICs to register (GPUDirect RDMA is not in this build): the registrar
 * leaves it out, registers the host regions beside it, and peers find no keys for it.
 */
@Timeout(10)
class GpuRegionRegistrationTest
{
    private final SimulatedFabric fabric = new SimulatedFabric();
    private final RdmaSide side = new RdmaSide(fabric, "10.0.0.1:12001", 1, "mlx5_0");

    @AfterEach
    void close()
    {
        side.close();
    }

    @Test
    void shouldRegisterTheHostRegionsOfATableAndLeaveItsGpuRegionsOut()
    {
        final Region gpu = Region.onDevice(0x7f00_0000_0000L, 1 << 20, "cuda:0",
            new DeviceAllocation("handle", 0, 0x5000_0000_0000L, 1 << 20), 0);
        final Region host = new Region(0x10_0000L, 4096, "cpu:0", side.arena.allocate(4096, 4096),
            side.arena.allocate(4096, 4096));

        side.registrar.sync(RegionTable.EMPTY.with(gpu).with(host));

        assertThat(side.registrar.isRegistered(host)).isTrue();
        assertThat(side.registrar.isRegistered(gpu)).isFalse();
        assertThat(side.transport.describe(gpu).rkey()).as("peers find no keys for GPU memory").isNull();
        assertThat(side.transport.describe(gpu).location()).isEqualTo("cuda:0");
    }
}
