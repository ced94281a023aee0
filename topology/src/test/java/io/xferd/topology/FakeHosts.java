package io.xferd.topology;

import java.nio.file.Path;

/** The fake hosts the tests share. */
final class FakeHosts
{
    private FakeHosts()
    {
    }

    /** One NUMA node of 8 CPUs, one Wi-Fi-less laptop NIC {@code enp0s31f6} on the chipset, no GPU (just Intel graphics). */
    static FakeSysfs laptop(final Path root)
    {
        return new FakeSysfs(root)
            .onlineCpus("0-7")
            .numaNode(0, "0-7")
            .pciDevice("pci0000:00/0000:00:02.0", FakeSysfs.CLASS_VGA, FakeSysfs.VENDOR_INTEL, -1)
            .ethernetNic("enp0s31f6", "pci0000:00/0000:00:1f.6", -1, 1000);
    }

    /**
     * Two sockets (node 0: CPUs 0-15,32-47; node 1: 16-31,48-63), four 100G NICs, two per socket, each
     * behind its own root port: {@code ens1f0}/{@code ens1f1} (two ports of one card) on node 0 and
     * {@code ens2f0}, {@code ens3f0} on node 1.
     */
    static FakeSysfs twoSocketServer(final Path root)
    {
        return new FakeSysfs(root)
            .onlineCpus("0-63")
            .numaNode(0, "0-15,32-47")
            .numaNode(1, "16-31,48-63")
            .ethernetNic("ens1f0", "pci0000:00/0000:00:01.0/0000:17:00.0", 0, 100000)
            .ethernetNic("ens1f1", "pci0000:00/0000:00:01.0/0000:17:00.1", 0, 100000)
            .ethernetNic("ens2f0", "pci0000:80/0000:80:01.0/0000:98:00.0", 1, 100000)
            .ethernetNic("ens3f0", "pci0000:80/0000:80:03.0/0000:b1:00.0", 1, 100000);
    }

    /**
     * GPU index -> the name of the NIC sharing its leaf PCIe switch in {@link #dgxH100}. Names are shuffled
     * within a node on purpose, so a matrix that paired by index instead of by PCIe path would fail.
     */
    static final String[] DGX_NIC_OF_GPU = {
        "mlx5_1", "mlx5_0", "mlx5_3", "mlx5_2", "mlx5_5", "mlx5_4", "mlx5_7", "mlx5_6"};

    /**
     * A DGX-H100-like host: 2 NUMA nodes, 4 root complexes (2 per node), under each an upper PCIe switch
     * with two leaf switches, each leaf holding one H100 and one ConnectX-7 (RDMA device {@code mlx5_N}
     * with netdev {@code ibpN}). Also an ASPEED BMC VGA, NVSwitches and an H100's sibling audio-like
     * function, which are not GPUs.
     */
    static FakeSysfs dgxH100(final Path root)
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .onlineCpus("0-223")
            .numaNode(0, "0-55,112-167")
            .numaNode(1, "56-111,168-223")
            .pciDevice("pci0000:00/0000:00:1c.0/0000:03:00.0/0000:04:00.0",
                FakeSysfs.CLASS_VGA, FakeSysfs.VENDOR_ASPEED, 0);
        final String[] rootBuses = {"15", "37", "97", "b7"};
        int gpu = 0;
        for (int complex = 0; complex < rootBuses.length; complex++)
        {
            final int numa = complex < 2 ? 0 : 1;
            final int bus = Integer.parseInt(rootBuses[complex], 16);
            final String upper = String.format("pci0000:%02x/0000:%02x:01.0/0000:%02x:00.0", bus, bus, bus + 1);
            for (int leaf = 0; leaf < 2; leaf++)
            {
                final int leafBus = bus + 3 + leaf * 4;
                final String leafSwitch = String.format("%s/0000:%02x:%02x.0/0000:%02x:00.0",
                    upper, bus + 2, leaf, leafBus);
                final String gpuPath = String.format("%s/0000:%02x:00.0/0000:%02x:00.0",
                    leafSwitch, leafBus + 1, leafBus + 2);
                final String nicPath = String.format("%s/0000:%02x:01.0/0000:%02x:00.0",
                    leafSwitch, leafBus + 1, leafBus + 3);
                sysfs.pciDevice(gpuPath, FakeSysfs.CLASS_3D, FakeSysfs.VENDOR_NVIDIA, numa);
                final String nic = DGX_NIC_OF_GPU[gpu];
                sysfs.pciDevice(nicPath, FakeSysfs.CLASS_INFINIBAND, FakeSysfs.VENDOR_MELLANOX, numa)
                    .netInterface("ibp" + nic.substring(5), nicPath, "400000", "up")
                    .rdmaDevice(nic, nicPath, "4: ACTIVE", "400 Gb/sec (4X NDR)");
                gpu++;
            }
            sysfs.pciDevice(String.format("pci0000:%02x/0000:%02x:02.0/0000:%02x:00.0", bus, bus, bus + 0x10),
                FakeSysfs.CLASS_OTHER_BRIDGE, FakeSysfs.VENDOR_NVIDIA, numa);
        }
        return sysfs;
    }
}
