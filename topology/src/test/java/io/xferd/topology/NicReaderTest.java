package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class NicReaderTest
{
    @TempDir
    Path root;

    @Test
    void shouldReadALaptopNicAndSkipLoopback()
    {
        final FakeSysfs sysfs = FakeHosts.laptop(root).netInterface("lo", null, null, "unknown");

        final List<NicInfo> nics = new NicReader(sysfs.sysfs()).read();

        assertThat(nics).hasSize(1);
        final NicInfo nic = nics.getFirst();
        assertThat(nic.name()).isEqualTo("enp0s31f6");
        assertThat(nic.kind()).isEqualTo(NicKind.ETHERNET);
        assertThat(nic.netdev()).isEqualTo("enp0s31f6");
        assertThat(nic.pciAddress()).isEqualTo("0000:00:1f.6");
        assertThat(nic.pciePath().hops()).containsExactly("pci0000:00", "0000:00:1f.6");
        assertThat(nic.numaNode()).as("numa_node -1 reads as node 0").isZero();
        assertThat(nic.speedMbps()).isEqualTo(1000);
        assertThat(nic.state()).isEqualTo("up");
        assertThat(nic.isUp()).isTrue();
        assertThat(nic.mac()).matches("02:00:00:00:[0-9a-f]{2}:[0-9a-f]{2}");
        assertThat(nic.addresses()).as("no addresses from a fake root").isEmpty();
    }

    @Test
    void shouldKeepVethPairsAsVirtualNicsOnNodeZero()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .netInterface("veth1", null, "10000", "up")
            .netInterface("veth0", null, null, "lowerlayerdown");

        final List<NicInfo> nics = new NicReader(sysfs.sysfs()).read();

        assertThat(nics).extracting(NicInfo::name).containsExactly("veth0", "veth1");
        assertThat(nics).allSatisfy(nic ->
        {
            assertThat(nic.pciAddress()).isNull();
            assertThat(nic.pciePath()).isEqualTo(PciePath.NONE);
            assertThat(nic.numaNode()).isZero();
        });
        assertThat(nics.get(0).speedMbps()).isEqualTo(NicInfo.UNKNOWN_SPEED);
        assertThat(nics.get(0).isUp()).isFalse();
        assertThat(nics.get(1).speedMbps()).isEqualTo(10000);
    }

    @Test
    void shouldTolerateUnreadableSpeedMinusOneAndMissingFiles()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .ethernetNic("eth0", "pci0000:00/0000:00:03.0", -1, 1000)
            .makeUnreadable("devices/pci0000:00/0000:00:03.0/net/eth0/speed")
            .netInterface("eth1", "pci0000:00/0000:00:04.0", "-1", "down")
            .write("devices/pci0000:00/0000:00:04.0/numa_node", "garbage\n")
            .netInterface("eth2", "pci0000:00/0000:00:05.0", "25000", "up")
            .write("devices/pci0000:00/0000:00:05.0/numa_node", "1\n");
        sysfs.write("devices/pci0000:00/0000:00:05.0/net/eth2/operstate", "");

        final List<NicInfo> nics = new NicReader(sysfs.sysfs()).read();

        assertThat(nics).extracting(NicInfo::name).containsExactly("eth0", "eth1", "eth2");
        assertThat(nics).extracting(NicInfo::speedMbps).containsExactly(-1L, -1L, 25000L);
        assertThat(nics).extracting(NicInfo::numaNode).containsExactly(0, 0, 1);
        assertThat(nics).extracting(NicInfo::state).containsExactly("up", "down", "unknown");
    }

    @Test
    void shouldReadTheNumaNodeOfTheParentPciFunctionOfAVirtioNic()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .pciDevice("pci0000:00/0000:00:03.0", FakeSysfs.CLASS_ETHERNET, 0x1af4, 1)
            .mkdirs("devices/pci0000:00/0000:00:03.0/virtio2/net/eth0")
            .write("devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/operstate", "up\n");
        link(sysfs, "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/device", "../../../virtio2");
        link(sysfs, "class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");

        final NicInfo nic = new NicReader(sysfs.sysfs()).read().getFirst();

        assertThat(nic.pciAddress()).isEqualTo("0000:00:03.0");
        assertThat(nic.numaNode()).isEqualTo(1);
    }

    @Test
    void shouldFoldTheNetdevOfAnRdmaDeviceIntoIt()
    {
        final String pci = "pci0000:00/0000:00:01.0/0000:17:00.0";
        final FakeSysfs sysfs = new FakeSysfs(root)
            .pciDevice(pci, FakeSysfs.CLASS_ETHERNET, FakeSysfs.VENDOR_MELLANOX, 0)
            .netInterface("ens1f0np0", pci, "200000", "up")
            .rdmaDevice("mlx5_0", pci, "4: ACTIVE", "200 Gb/sec (4X HDR)")
            .rdmaDevice("mlx5_1", "pci0000:00/0000:00:02.0/0000:18:00.0", "1: DOWN", null)
            .ethernetNic("eno1", "pci0000:00/0000:00:1f.6", 0, 1000);

        final List<NicInfo> nics = new NicReader(sysfs.sysfs()).read();

        assertThat(nics).extracting(NicInfo::name).containsExactly("mlx5_0", "mlx5_1", "eno1");
        final NicInfo roce = nics.get(0);
        assertThat(roce.kind()).isEqualTo(NicKind.RDMA);
        assertThat(roce.netdev()).isEqualTo("ens1f0np0");
        assertThat(roce.pciAddress()).isEqualTo("0000:17:00.0");
        assertThat(roce.speedMbps()).isEqualTo(200_000);
        assertThat(roce.state()).isEqualTo("active");
        assertThat(roce.isUp()).isTrue();
        assertThat(roce.mac()).isNotNull();
        final NicInfo ib = nics.get(1);
        assertThat(ib.netdev()).as("InfiniBand without IPoIB has no netdev").isNull();
        assertThat(ib.state()).isEqualTo("down");
        assertThat(ib.speedMbps()).isEqualTo(NicInfo.UNKNOWN_SPEED);
        assertThat(ib.numaNode()).isZero();
        assertThat(nics.get(2).kind()).isEqualTo(NicKind.ETHERNET);
    }

    @Test
    void shouldListNicsInNaturalNameOrder()
    {
        final FakeSysfs sysfs = new FakeSysfs(root);
        for (final int i : new int[] {10, 2, 0, 1})
        {
            sysfs.rdmaDevice("mlx5_" + i, String.format("pci0000:00/0000:00:%02x.0", i + 1), "4: ACTIVE", "100");
        }

        assertThat(new NicReader(sysfs.sysfs()).read()).extracting(NicInfo::name)
            .containsExactly("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10");
    }

    @Test
    void shouldParseRdmaRatesAndStates()
    {
        assertThat(NicReader.rateMbps("400 Gb/sec (4X NDR)")).isEqualTo(400_000);
        assertThat(NicReader.rateMbps("2.5 Gb/sec (1X SDR)")).isEqualTo(2_500);
        assertThat(NicReader.rateMbps("fast")).isEqualTo(NicInfo.UNKNOWN_SPEED);
        assertThat(NicReader.rateMbps(null)).isEqualTo(NicInfo.UNKNOWN_SPEED);
        assertThat(NicReader.rdmaState("4: ACTIVE")).isEqualTo("active");
        assertThat(NicReader.rdmaState("2: INIT")).isEqualTo("init");
        assertThat(NicReader.rdmaState(null)).isEqualTo("unknown");
    }

    private static void link(final FakeSysfs sysfs, final String relative, final String target)
    {
        try
        {
            java.nio.file.Files.createSymbolicLink(sysfs.root().resolve(relative), Path.of(target));
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
