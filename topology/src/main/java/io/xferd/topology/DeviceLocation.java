package io.xferd.topology;

import java.nio.file.Path;

/**
 * Where a {@code device} link of sysfs points: its PCIe path and NUMA node. The NUMA node is read from
 * the PCI function the path ends at (a virtio NIC's own directory has no {@code numa_node}, its PCI
 * parent has), else from the device itself; -1 ("no affinity") and unknown read as node 0.
 */
record DeviceLocation(PciePath pciePath, int numaNode)
{
    static final DeviceLocation VIRTUAL = new DeviceLocation(PciePath.NONE, 0);

    /** @param deviceLink a {@code device} symlink (or the device directory itself); it may be missing. */
    static DeviceLocation of(final Path deviceLink)
    {
        final Path real = SysfsRoot.realPath(deviceLink);
        if (null == real)
        {
            return VIRTUAL;
        }
        final PciePath pcie = PciePath.fromDevicePath(real);
        Path numaDir = real;
        if (!pcie.isEmpty())
        {
            while (null != numaDir && !pcie.address().equals(String.valueOf(numaDir.getFileName())))
            {
                numaDir = numaDir.getParent();
            }
        }
        final long node = SysfsRoot.readLong((null == numaDir ? real : numaDir).resolve("numa_node"), -1);
        return new DeviceLocation(pcie, node < 0 || node > Integer.MAX_VALUE ? 0 : (int)node);
    }
}
