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
    private static final ThreadLocal<long[]> THREAD_STREAMS = ThreadLocal.withInitial(() -> new long[0]);

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
     * {@code cudaMemcpyAsync} with {@code cudaMemcpyDefault} on this thread's own stream for the device, then
     * {@code cudaStreamSynchronize} of that stream: the completion must not come before the bytes landed, and
     * waiting for the whole device ({@code cudaDeviceSynchronize}) would serialise every thread's copies.
     */
    @Override
    public void copy(final int device, final long destination, final long source, final long length)
    {
        CudaRuntime.setDevice(device);
        final long stream = streamOf(device);
        CudaRuntime.memcpyAsync(destination, source, length, CudaLayouts.MEMCPY_DEFAULT, stream);
        CudaRuntime.streamSynchronize(stream);
    }

    /**
     * {@code cudaMemcpyAsync} on this thread's own stream for the device, not waited for: from or to pinned memory
     * it returns before the DMA ends (from pageable memory the runtime stages it first, synchronously).
     */
    @Override
    public void startCopy(final int device, final long destination, final long source, final long length)
    {
        CudaRuntime.setDevice(device);
        CudaRuntime.memcpyAsync(destination, source, length, CudaLayouts.MEMCPY_DEFAULT, streamOf(device));
    }

    /**
     * {@code cudaStreamSynchronize} of this thread's stream for the device.
     */
    @Override
    public void awaitCopies(final int device)
    {
        CudaRuntime.setDevice(device);
        CudaRuntime.streamSynchronize(streamOf(device));
    }

    /**
     * The calling thread's non-blocking stream on {@code device}, made on its first copy there. Worker and peer
     * threads live as long as the daemon, so their streams do too (the driver frees them with the context).
     */
    private long streamOf(final int device)
    {
        long[] streams = THREAD_STREAMS.get();
        if (device >= streams.length)
        {
            streams = java.util.Arrays.copyOf(streams, device + 1);
            THREAD_STREAMS.set(streams);
        }
        if (streams[device] == 0)
        {
            streams[device] = CudaRuntime.streamCreate(CudaLayouts.STREAM_NON_BLOCKING);
        }
        return streams[device];
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
