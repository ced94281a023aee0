package io.xferd.topology;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs against this machine's own {@code /sys}; asserts only what holds on any Linux host. */
class LiveSysfsTest
{
    @Test
    void discoveryOfThisHostShouldHoldTogether()
    {
        final SysfsRoot sysfs = SysfsRoot.system();
        assertThat(sysfs.isLive()).isTrue();

        final HostTopology host = HostTopology.discover(sysfs);
        final TopologyMatrix matrix = TopologyMatrix.build(host);

        assertThat(host.numaNodes()).isNotEmpty();
        for (final NicInfo nic : host.nics())
        {
            assertThat(nic.name()).isNotEqualTo("lo");
            final Path classDir = Path.of("/sys/class", NicKind.RDMA == nic.kind() ? "infiniband" : "net", nic.name());
            assertThat(Files.exists(classDir)).as("%s exists", classDir).isTrue();
            if (null != nic.netdev())
            {
                assertThat(Files.exists(Path.of("/sys/class/net", nic.netdev()))).isTrue();
            }
            assertThat(nic.numaNode()).isNotNegative();
        }
        for (final GpuInfo gpu : host.gpus())
        {
            assertThat(Files.exists(Path.of("/sys/bus/pci/devices", gpu.pciAddress()))).isTrue();
        }
        assertThat(matrix.rows()).containsKey("cpu:0");
        assertThat(matrix.nics()).containsExactlyInAnyOrderElementsOf(
            host.nics().stream().map(NicInfo::name).toList());
        assertThat(TopologyMatrix.fromJson(matrix.toJson())).isEqualTo(matrix);
    }
}
