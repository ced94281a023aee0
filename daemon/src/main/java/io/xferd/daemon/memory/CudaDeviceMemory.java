package io.xferd.daemon.memory;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaDriver;
import io.xferd.nativebindings.cuda.CudaIpcMemHandle;
import io.xferd.nativebindings.cuda.CudaLayouts;
import io.xferd.nativebindings.cuda.CudaRuntime;

import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * {@link DeviceMemory} through the CUDA runtime; nothing here touches libcudart before the first GPU registration.
 * Every call sets its device first: the current device is per thread, and agents may share threads.
 */
public final class CudaDeviceMemory implements DeviceMemory
{
    private volatile String[] pciBusIds;

    @Override
    public Availability availability()
    {
        return CudaRuntime.availability();
    }

    @Override
    public int deviceCount()
    {
        return CudaRuntime.deviceCount();
    }

    @Override
    public int deviceOf(final String pciBusId)
    {
        String[] ids = pciBusIds;
        if (ids == null)
        {
            ids = new String[CudaRuntime.deviceCount()];
            for (int i = 0; i < ids.length; i++)
            {
                ids[i] = CudaRuntime.pciBusId(i);
            }
            pciBusIds = ids;
        }
        final String wanted = pciBusId.toLowerCase(Locale.ROOT);
        for (int i = 0; i < ids.length; i++)
        {
            if (ids[i].equals(wanted))
            {
                return i;
            }
        }
        return -1;
    }

    @Override
    public long open(final int device, final byte[] ipcHandle)
    {
        CudaRuntime.setDevice(device);
        return CudaRuntime.ipcOpenMemHandle(CudaIpcMemHandle.of(ipcHandle));
    }

    @Override
    public void close(final int device, final long baseAddress)
    {
        CudaRuntime.setDevice(device);
        CudaRuntime.ipcCloseMemHandle(baseAddress);
    }

    /**
     * {@code cuMemGetAddressRange} from libcuda (the runtime API has no such call); -1 without libcuda.
     */
    @Override
    public long allocationSize(final int device, final long baseAddress)
    {
        if (!CudaDriver.availability().isAvailable())
        {
            return -1;
        }
        CudaRuntime.setDevice(device);
        return CudaDriver.bytesToEndOfAllocation(baseAddress);
    }

    /**
     * {@code cudaMemcpy} with {@code cudaMemcpyDefault} then {@code cudaDeviceSynchronize}: a device-to-device copy,
     * or one from pageable host memory, may return before the bytes landed, and the completion must not.
     */
    @Override
    public void copy(final int device, final long destination, final long source, final long length)
    {
        CudaRuntime.setDevice(device);
        CudaRuntime.memcpy(destination, source, length, CudaLayouts.MEMCPY_DEFAULT);
        CudaRuntime.deviceSynchronize();
    }

    /**
     * {@code cudaMallocHost}: portable across devices under unified addressing, so one buffer serves them all.
     */
    @Override
    public MemorySegment allocatePinned(final long size)
    {
        return CudaRuntime.mallocHost(size);
    }

    @Override
    public void freePinned(final MemorySegment pinned)
    {
        CudaRuntime.freeHost(pinned);
    }
}
