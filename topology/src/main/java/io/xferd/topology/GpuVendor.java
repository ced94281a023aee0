package io.xferd.topology;

/**
 * GPU vendors discovery knows, with the PCI vendor id and the prefix of their matrix locations.
 * NVIDIA GPUs are {@code cuda:N} as in Mooncake; AMD GPUs are {@code hip:N} (HIP being the runtime the
 * daemon would use for them), numbered separately so {@code hip:0} is the first AMD GPU.
 */
public enum GpuVendor
{
    NVIDIA(0x10de, "cuda"),
    AMD(0x1002, "hip");

    private final int pciVendorId;
    private final String locationPrefix;

    GpuVendor(final int pciVendorId, final String locationPrefix)
    {
        this.pciVendorId = pciVendorId;
        this.locationPrefix = locationPrefix;
    }

    public int pciVendorId()
    {
        return pciVendorId;
    }

    public String locationPrefix()
    {
        return locationPrefix;
    }

    /** @return the vendor with this PCI vendor id, or null. */
    public static GpuVendor byPciVendorId(final long vendorId)
    {
        for (final GpuVendor vendor : values())
        {
            if (vendor.pciVendorId == vendorId)
            {
                return vendor;
            }
        }
        return null;
    }
}
