package io.xferd.topology;

import java.util.List;

/** What discovery found on one host: NUMA nodes, NICs and GPUs. */
public record HostTopology(List<NumaNode> numaNodes, List<NicInfo> nics, List<GpuInfo> gpus)
{
    public HostTopology
    {
        numaNodes = List.copyOf(numaNodes);
        nics = List.copyOf(nics);
        gpus = List.copyOf(gpus);
    }

    /** @return the topology of this host, read from {@code /sys}. */
    public static HostTopology discover()
    {
        return discover(SysfsRoot.system());
    }

    /**
     * Reads the whole topology below {@code sysfs}. IP addresses are filled in only when the root is the
     * live {@code /sys} (see {@link InterfaceAddresses}).
     */
    public static HostTopology discover(final SysfsRoot sysfs)
    {
        final List<NicInfo> nics = new NicReader(sysfs).read();
        return new HostTopology(
            new CpuTopologyReader(sysfs).read(),
            sysfs.isLive() ? InterfaceAddresses.fill(nics) : nics,
            new GpuReader(sysfs).read());
    }

    /** @return the NIC of this name, or null. */
    public NicInfo nic(final String name)
    {
        for (final NicInfo nic : nics)
        {
            if (nic.name().equals(name))
            {
                return nic;
            }
        }
        return null;
    }
}
