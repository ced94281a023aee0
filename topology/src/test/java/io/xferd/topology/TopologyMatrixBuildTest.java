package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TopologyMatrixBuildTest
{
    @TempDir
    Path root;

    @Test
    void laptopShouldPreferItsOnlyNic()
    {
        final TopologyMatrix matrix = matrixOf(FakeHosts.laptop(root));

        assertThat(matrix.toJson()).isEqualTo("{\"cpu:0\": [[\"enp0s31f6\"], []]}");
    }

    @Test
    void twoSocketServerShouldPreferTheNicsOfEachSocket()
    {
        final TopologyMatrix matrix = matrixOf(FakeHosts.twoSocketServer(root));

        assertThat(matrix.rows().keySet()).containsExactly("cpu:0", "cpu:1");
        assertThat(matrix.preferred("cpu:0")).containsExactly("ens1f0", "ens1f1");
        assertThat(matrix.available("cpu:0")).containsExactly("ens2f0", "ens3f0");
        assertThat(matrix.preferred("cpu:1")).containsExactly("ens2f0", "ens3f0");
        assertThat(matrix.available("cpu:1")).containsExactly("ens1f0", "ens1f1");
        assertThat(matrix.nics()).containsExactly("ens1f0", "ens1f1", "ens2f0", "ens3f0");
    }

    @Test
    void dgxShouldPairEachGpuWithTheNicOfItsPcieSwitch()
    {
        final HostTopology host = HostTopology.discover(FakeHosts.dgxH100(root).sysfs());
        final TopologyMatrix matrix = TopologyMatrix.build(host);
        final List<String> allNics = List.of(
            "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7");

        assertThat(host.nics()).extracting(NicInfo::name).containsExactlyElementsOf(allNics);
        assertThat(host.nics()).allSatisfy(nic -> assertThat(nic.kind()).isEqualTo(NicKind.RDMA));
        assertThat(matrix.rows().keySet()).containsExactly(
            "cpu:0", "cpu:1", "cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "cuda:5", "cuda:6", "cuda:7");

        assertThat(matrix.preferred("cpu:0")).containsExactly("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3");
        assertThat(matrix.available("cpu:0")).containsExactly("mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7");
        assertThat(matrix.preferred("cpu:1")).containsExactly("mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7");

        assertThat(matrix.preferred("cuda:3")).containsExactly("mlx5_2");
        assertThat(matrix.available("cuda:3"))
            .containsExactly("mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7");
        for (int gpu = 0; gpu < 8; gpu++)
        {
            final String own = FakeHosts.DGX_NIC_OF_GPU[gpu];
            final List<String> others = new ArrayList<>(allNics);
            others.remove(own);
            assertThat(matrix.preferred("cuda:" + gpu)).as("cuda:%d", gpu).containsExactly(own);
            assertThat(matrix.available("cuda:" + gpu)).as("cuda:%d", gpu).containsExactlyElementsOf(others);
        }
    }

    @Test
    void gpuShouldPreferNicsOnItsNumaNodeOverACloserOneElsewhere()
    {
        // cuda:0 on node 1 shares a root port with eth0 (node 0, a mis-reported numa_node); eth1 is on node 1.
        final FakeSysfs sysfs = new FakeSysfs(root)
            .numaNode(0, "0-3").numaNode(1, "4-7")
            .pciDevice("pci0000:00/0000:00:01.0/0000:01:00.0", FakeSysfs.CLASS_3D, FakeSysfs.VENDOR_NVIDIA, 1)
            .ethernetNic("eth0", "pci0000:00/0000:00:01.0/0000:01:00.1", 0, 100000)
            .ethernetNic("eth1", "pci0000:80/0000:80:01.0/0000:81:00.0", 1, 100000)
            .ethernetNic("eth2", "pci0000:80/0000:80:02.0/0000:82:00.0", 1, 100000);

        final TopologyMatrix matrix = matrixOf(sysfs);

        assertThat(matrix.preferred("cuda:0")).containsExactly("eth1", "eth2");
        assertThat(matrix.available("cuda:0")).containsExactly("eth0");
    }

    @Test
    void gpuShouldPreferEveryEquallyCloseNic()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .numaNode(0, "0-3")
            .pciDevice("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
                FakeSysfs.CLASS_3D, FakeSysfs.VENDOR_NVIDIA, 0)
            .ethernetNic("eth0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", 0, 100000)
            .ethernetNic("eth1", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0", 0, 100000)
            .ethernetNic("eth2", "pci0000:00/0000:00:02.0/0000:06:00.0", 0, 100000);

        final TopologyMatrix matrix = matrixOf(sysfs);

        assertThat(matrix.preferred("cuda:0")).containsExactly("eth0", "eth1");
        assertThat(matrix.available("cuda:0")).containsExactly("eth2");
    }

    @Test
    void nodeWithoutNicsShouldPreferEveryNic()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .numaNode(0, "0-3").numaNode(1, "4-7")
            .ethernetNic("eth0", "pci0000:00/0000:00:01.0/0000:01:00.0", 0, 10000)
            .netInterface("veth0", null, "10000", "up");

        final TopologyMatrix matrix = matrixOf(sysfs);

        assertThat(matrix.preferred("cpu:0")).containsExactly("eth0", "veth0");
        assertThat(matrix.preferred("cpu:1")).containsExactly("eth0", "veth0");
        assertThat(matrix.available("cpu:1")).isEmpty();
    }

    @Test
    void hostWithoutNicsShouldHaveEmptyRows()
    {
        final TopologyMatrix matrix = matrixOf(new FakeSysfs(root).numaNode(0, "0-1"));

        assertThat(matrix.toJson()).isEqualTo("{\"cpu:0\": [[], []]}");
    }

    private static TopologyMatrix matrixOf(final FakeSysfs sysfs)
    {
        return TopologyMatrix.build(HostTopology.discover(sysfs.sysfs()));
    }
}
