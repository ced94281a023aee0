package io.xferd.topology;

/**
 * One GPU.
 *
 * @param vendor     NVIDIA or AMD.
 * @param index      its rank in PCI address order among the GPUs of its vendor: the device number the
 *                   runtime gives it under {@code CUDA_DEVICE_ORDER=PCI_BUS_ID} with no
 *                   {@code CUDA_VISIBLE_DEVICES} / {@code HIP_VISIBLE_DEVICES} remapping.
 * @param pciAddress {@code domain:bus:device.function}.
 * @param numaNode   the node it is attached to; 0 when sysfs says -1.
 * @param pciePath   its place in the PCIe tree.
 */
public record GpuInfo(GpuVendor vendor, int index, String pciAddress, int numaNode, PciePath pciePath)
{
    /** @return the matrix location, {@code cuda:N} (NVIDIA) or {@code hip:N} (AMD). */
    public String location()
    {
        return vendor.locationPrefix() + ":" + index;
    }
}
