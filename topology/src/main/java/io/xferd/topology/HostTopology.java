package io.xferd.topology;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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

    /**
     * Number one vendor's GPUs as its runtime does: discovery numbers them in PCI address order (the runtime's
     * order only under {@code CUDA_DEVICE_ORDER=PCI_BUS_ID}); the runtime's own ordinals, by PCI address, are
     * what a client's {@code cuda:N} means. GPUs of that vendor the runtime does not list are left out.
     *
     * @param ordinalByPciAddress the runtime's device number of each PCI address it lists (any case or width).
     */
    public HostTopology withGpuOrdinals(final GpuVendor vendor, final Map<String, Integer> ordinalByPciAddress)
    {
        final Map<String, Integer> ordinals = new HashMap<>();
        ordinalByPciAddress.forEach((address, ordinal) -> ordinals.put(PciAddress.canonical(address), ordinal));
        final List<GpuInfo> renumbered = new ArrayList<>();
        for (final GpuInfo gpu : gpus)
        {
            if (gpu.vendor() != vendor)
            {
                renumbered.add(gpu);
                continue;
            }
            final Integer ordinal = ordinals.get(PciAddress.canonical(gpu.pciAddress()));
            if (ordinal != null)
            {
                renumbered.add(new GpuInfo(vendor, ordinal, gpu.pciAddress(), gpu.numaNode(), gpu.pciePath()));
            }
        }
        renumbered.sort(Comparator.comparing(GpuInfo::vendor).thenComparingInt(GpuInfo::index));
        return new HostTopology(numaNodes, nics, renumbered);
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
