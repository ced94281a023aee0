package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class GpuReaderTest
{
    @TempDir
    Path root;

    @Test
    void shouldFindNvidiaAndAmdDisplayFunctionsOnly()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .pciDevice("pci0000:00/0000:00:02.0", FakeSysfs.CLASS_VGA, FakeSysfs.VENDOR_INTEL, -1)
            .pciDevice("pci0000:80/0000:80:01.0/0000:9a:00.0", FakeSysfs.CLASS_3D, FakeSysfs.VENDOR_NVIDIA, 1)
            .pciDevice("pci0000:00/0000:00:01.0/0000:10:00.0", FakeSysfs.CLASS_VGA, FakeSysfs.VENDOR_NVIDIA, -1)
            .pciDevice("pci0000:00/0000:00:01.0/0000:10:00.1", FakeSysfs.CLASS_AUDIO, FakeSysfs.VENDOR_NVIDIA, -1)
            .pciDevice("pci0000:00/0000:00:05.0/0000:20:00.0", FakeSysfs.CLASS_OTHER_BRIDGE, FakeSysfs.VENDOR_NVIDIA, 0)
            .pciDevice("pci0000:00/0000:00:03.0/0000:c1:00.0", 0x038000, FakeSysfs.VENDOR_AMD, 0)
            .pciDevice("pci0000:00/0000:00:04.0/0000:c5:00.0", FakeSysfs.CLASS_VGA, FakeSysfs.VENDOR_AMD, 0);

        final List<GpuInfo> gpus = new GpuReader(sysfs.sysfs()).read();

        assertThat(gpus).extracting(GpuInfo::location, GpuInfo::pciAddress, GpuInfo::numaNode).containsExactly(
            org.assertj.core.groups.Tuple.tuple("cuda:0", "0000:10:00.0", 0),
            org.assertj.core.groups.Tuple.tuple("cuda:1", "0000:9a:00.0", 1),
            org.assertj.core.groups.Tuple.tuple("hip:0", "0000:c1:00.0", 0),
            org.assertj.core.groups.Tuple.tuple("hip:1", "0000:c5:00.0", 0));
        assertThat(gpus.get(1).pciePath().hops()).containsExactly("pci0000:80", "0000:80:01.0", "0000:9a:00.0");
        assertThat(gpus.get(0).vendor()).isEqualTo(GpuVendor.NVIDIA);
    }

    @Test
    void shouldFindNoGpuOnALaptopWithIntelGraphics()
    {
        assertThat(new GpuReader(FakeHosts.laptop(root).sysfs()).read()).isEmpty();
    }

    @Test
    void shouldFindTheEightGpusOfADgxInPciOrder()
    {
        final List<GpuInfo> gpus = new GpuReader(FakeHosts.dgxH100(root).sysfs()).read();

        assertThat(gpus).extracting(GpuInfo::location)
            .containsExactly("cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "cuda:5", "cuda:6", "cuda:7");
        assertThat(gpus).extracting(GpuInfo::pciAddress).isSorted();
        assertThat(gpus).extracting(GpuInfo::numaNode).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
    }
}
