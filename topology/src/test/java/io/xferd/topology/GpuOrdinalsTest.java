package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A client's {@code cuda:N} is the CUDA runtime's device N, which need not be the N-th GPU in PCI order
 * (CUDA's default order puts the fastest first). With the runtime's ordinals the matrix rows follow them.
 */
class GpuOrdinalsTest
{
    @TempDir
    Path root;

    @Test
    void rowsFollowTheRuntimesOrdinalsNotThePciOrder()
    {
        final HostTopology host = HostTopology.discover(FakeHosts.dgxH100(root).sysfs());
        final Map<String, Integer> reversed = new HashMap<>();
        for (final GpuInfo gpu : host.gpus())
        {
            // as cudaDeviceGetPCIBusId writes them: upper case, 8-digit domain
            reversed.put("0000" + gpu.pciAddress().toUpperCase(), 7 - gpu.index());
        }

        final HostTopology cudaOrder = host.withGpuOrdinals(GpuVendor.NVIDIA, reversed);
        final TopologyMatrix matrix = TopologyMatrix.build(cudaOrder);

        assertThat(cudaOrder.gpus()).extracting(GpuInfo::location)
            .containsExactly("cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "cuda:5", "cuda:6", "cuda:7");
        for (int ordinal = 0; ordinal < 8; ordinal++)
        {
            assertThat(cudaOrder.gpus().get(ordinal).pciAddress()).isEqualTo(host.gpus().get(7 - ordinal).pciAddress());
            assertThat(matrix.preferred("cuda:" + ordinal)).as("cuda:%d", ordinal)
                .containsExactly(FakeHosts.DGX_NIC_OF_GPU[7 - ordinal]);
        }
    }

    @Test
    void gpusTheRuntimeDoesNotListAreLeftOut()
    {
        final HostTopology host = HostTopology.discover(FakeHosts.dgxH100(root).sysfs());
        final String third = host.gpus().get(2).pciAddress();

        final HostTopology visible = host.withGpuOrdinals(GpuVendor.NVIDIA, Map.of(third, 0));

        assertThat(visible.gpus()).extracting(GpuInfo::location, GpuInfo::pciAddress)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("cuda:0", third));
        assertThat(visible.nics()).isEqualTo(host.nics());
    }

    @Test
    void pciAddressesAreComparedInSysfsForm()
    {
        assertThat(PciAddress.canonical("00000000:3B:00.0")).isEqualTo("0000:3b:00.0");
        assertThat(PciAddress.canonical("0000:3b:00.0")).isEqualTo("0000:3b:00.0");
        assertThat(PciAddress.canonical(" 0001:C1:1F.7\n")).isEqualTo("0001:c1:1f.7");
        for (final String bad : List.of("3b:00.0", "0000:3b:00", "zz:3b:00.0", ""))
        {
            assertThatThrownBy(() -> PciAddress.canonical(bad)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a PCI address");
        }
    }
}
