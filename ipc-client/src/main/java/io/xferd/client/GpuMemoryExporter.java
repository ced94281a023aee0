package io.xferd.client;

import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaException;
import io.xferd.nativebindings.cuda.CudaPointerAttributes;
import io.xferd.nativebindings.cuda.CudaRuntime;

/**
 * Turns a range of this process's device memory into what the daemon needs to open it: the CUDA IPC handle of the
 * allocation that holds it, the device's PCI bus id (the daemon numbers devices its own way), and the range's offset
 * in the allocation.
 */
final class GpuMemoryExporter
{
    private GpuMemoryExporter()
    {
    }

    /**
     * Refuse, before anything is exported or sent, a location that is not "cuda:N", a range that is empty or starts
     * before its allocation, and a process without a usable CUDA runtime.
     *
     * @throws CudaUnavailableException when this process has no usable CUDA runtime.
     */
    static void check(final long devicePointer, final long length, final String location, final long allocationBase)
    {
        if (GpuMemoryRegistration.cudaOrdinal(location) < 0)
        {
            throw new IllegalArgumentException("GPU memory needs a location cuda:N, not " + location);
        }
        if (length <= 0 || devicePointer < allocationBase)
        {
            throw new IllegalArgumentException("bad GPU range 0x" + Long.toHexString(devicePointer) + "+" + length +
                " in the allocation at 0x" + Long.toHexString(allocationBase));
        }
        final Availability cuda = CudaRuntime.availability();
        if (!cuda.isAvailable())
        {
            throw new CudaUnavailableException("cannot register GPU memory: CUDA is not available in this process (" +
                cuda.reason() + ")");
        }
    }

    /**
     * Export on the memory's own device, as a device guard would, and give the calling thread its device back.
     *
     * @throws IllegalArgumentException when the pointer is not device memory.
     * @throws XferException            when CUDA fails to export it.
     */
    static GpuMemoryRegistration export(final long correlationId, final long devicePointer, final long length,
        final String location, final long allocationBase)
    {
        try
        {
            final CudaPointerAttributes attributes = CudaRuntime.pointerAttributes(devicePointer);
            if (!attributes.isDevice())
            {
                throw new IllegalArgumentException("0x" + Long.toHexString(devicePointer) +
                    " is not device memory (cudaPointerGetAttributes type " + attributes.type() + ")");
            }
            final int current = CudaRuntime.getDevice();
            if (current != attributes.device())
            {
                CudaRuntime.setDevice(attributes.device());
            }
            try
            {
                return new GpuMemoryRegistration(correlationId, devicePointer, length, devicePointer - allocationBase,
                    CudaRuntime.ipcGetMemHandle(allocationBase).toBytes(), CudaRuntime.pciBusId(attributes.device()),
                    location);
            }
            finally
            {
                if (current != attributes.device())
                {
                    CudaRuntime.setDevice(current);
                }
            }
        }
        catch (final CudaException ex)
        {
            throw new XferException("cannot export GPU memory 0x" + Long.toHexString(devicePointer) + ": " +
                ex.getMessage(), ex);
        }
    }
}
