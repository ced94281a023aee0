package io.xferd.topology;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Reads GPUs from {@code bus/pci/devices/*}: functions whose {@code class} is a display controller (VGA
 * {@code 0x0300xx}, 3D {@code 0x0302xx}, or other display {@code 0x0380xx}, which AMD Instinct parts
 * report) and whose {@code vendor} is NVIDIA ({@code 0x10de}) or AMD ({@code 0x1002}). A BMC's VGA
 * (ASPEED and the like) is another vendor and is left out, as are NVIDIA's audio functions and NVSwitches
 * (other classes). Each entry of {@code bus/pci/devices} is a link into {@code devices/pci...}; its
 * resolved path is the GPU's PCIe path.
 */
public final class GpuReader
{
    private static final long CLASS_VGA = 0x0300;
    private static final long CLASS_3D = 0x0302;
    private static final long CLASS_OTHER_DISPLAY = 0x0380;

    private final SysfsRoot sysfs;

    public GpuReader(final SysfsRoot sysfs)
    {
        this.sysfs = sysfs;
    }

    /** @return the GPUs, by vendor then PCI address (fixed-width hex, so string order is address order). */
    public List<GpuInfo> read()
    {
        final Map<GpuVendor, Integer> nextIndex = new EnumMap<>(GpuVendor.class);
        final List<GpuInfo> gpus = new ArrayList<>();
        for (final GpuVendor wanted : GpuVendor.values())
        {
            for (final String address : sysfs.list("bus/pci/devices"))
            {
                final var dir = sysfs.resolve("bus/pci/devices/" + address);
                if (wanted != GpuVendor.byPciVendorId(SysfsRoot.readLong(dir.resolve("vendor"), -1)) ||
                    !isDisplayClass(SysfsRoot.readLong(dir.resolve("class"), -1)))
                {
                    continue;
                }
                final DeviceLocation location = DeviceLocation.of(dir);
                final int index = nextIndex.merge(wanted, 1, Integer::sum) - 1;
                gpus.add(new GpuInfo(wanted, index, address, location.numaNode(), location.pciePath()));
            }
        }
        return List.copyOf(gpus);
    }

    static boolean isDisplayClass(final long pciClass)
    {
        final long baseAndSub = pciClass >> 8;
        return CLASS_VGA == baseAndSub || CLASS_3D == baseAndSub || CLASS_OTHER_DISPLAY == baseAndSub;
    }
}
