package io.xferd.topology;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class PciePathTest
{
    private static final PciePath GPU = path("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
    private static final PciePath SAME_SWITCH_NIC =
        path("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0");
    private static final PciePath OTHER_ROOT_PORT_NIC = path("pci0000:00/0000:00:03.0/0000:05:00.0");
    private static final PciePath OTHER_COMPLEX_NIC = path("pci0000:80/0000:80:01.0/0000:81:00.0");

    @Test
    void shouldKeepTheHopsFromTheRootComplexDown()
    {
        assertThat(GPU.hops()).containsExactly(
            "pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0");
        assertThat(GPU.address()).isEqualTo("0000:03:00.0");
        assertThat(GPU).hasToString("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
    }

    @Test
    void shouldStopAtTheLastPciFunctionOfAVirtioDevice()
    {
        final PciePath virtio = PciePath.fromDevicePath(Path.of("/sys/devices/pci0000:00/0000:00:03.0/virtio2"));

        assertThat(virtio.hops()).containsExactly("pci0000:00", "0000:00:03.0");
        assertThat(virtio.address()).isEqualTo("0000:00:03.0");
    }

    @Test
    void shouldBeEmptyOffPcie()
    {
        assertThat(PciePath.fromDevicePath(Path.of("/sys/devices/virtual/net/veth0"))).isEqualTo(PciePath.NONE);
        assertThat(PciePath.fromDevicePath(Path.of("/sys/devices/platform/soc/eth0"))).isEqualTo(PciePath.NONE);
        assertThat(PciePath.fromDevicePath(null)).isEqualTo(PciePath.NONE);
        assertThat(PciePath.NONE.address()).isNull();
    }

    @Test
    void distanceShouldCountHopsToTheLowestCommonAncestor()
    {
        assertThat(GPU.distanceTo(GPU)).isZero();
        assertThat(GPU.distanceTo(SAME_SWITCH_NIC)).isEqualTo(4);
        assertThat(GPU.distanceTo(OTHER_ROOT_PORT_NIC)).isEqualTo(4 + 2);
        assertThat(GPU.distanceTo(OTHER_COMPLEX_NIC)).isEqualTo(5 + 3);
        assertThat(SAME_SWITCH_NIC.distanceTo(GPU)).isEqualTo(GPU.distanceTo(SAME_SWITCH_NIC));
        assertThat(path("pci0000:00/0000:00:01.0/0000:01:00.0")
            .distanceTo(path("pci0000:00/0000:00:01.0/0000:01:00.1"))).isEqualTo(2);
    }

    @Test
    void distanceToNothingShouldBeUnreachable()
    {
        assertThat(GPU.distanceTo(PciePath.NONE)).isEqualTo(PciePath.UNREACHABLE);
        assertThat(PciePath.NONE.distanceTo(GPU)).isEqualTo(PciePath.UNREACHABLE);
    }

    private static PciePath path(final String hops)
    {
        return new PciePath(List.of(hops.split("/")));
    }
}
