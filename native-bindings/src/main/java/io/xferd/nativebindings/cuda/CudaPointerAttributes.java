package io.xferd.nativebindings.cuda;

/**
 * What {@code cudaPointerGetAttributes} says about an address.
 *
 * @param type          {@code CudaLayouts.MEMORY_TYPE_*}.
 * @param device        the device the memory belongs to (for host memory, the device current when it was
 *                      allocated).
 * @param devicePointer the address to use from device code, 0 when none.
 * @param hostPointer   the address to use from the host, 0 when not host-accessible.
 */
public record CudaPointerAttributes(int type, int device, long devicePointer, long hostPointer)
{
    public boolean isDevice()
    {
        return type == CudaLayouts.MEMORY_TYPE_DEVICE;
    }
}
