package io.xferd.nativebindings.cuda;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.NativeLibrary;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CUDA runtime (libcudart) through FFM: device count and PCI bus ids for topology, pointer attributes, IPC
 * handles (a client exports GPU memory, the daemon opens it), device and pinned host allocation, and
 * {@code cudaMemcpy} for the TCP path's staging through pinned memory.
 * <p>
 * The library is loaded lazily, trying {@code libcudart.so}, {@code libcudart.so.13}, {@code libcudart.so.12};
 * nothing throws at class initialisation. A failed call throws {@link CudaException} with the {@code cudaError_t};
 * a call when no libcudart loaded throws {@link io.xferd.nativebindings.LibraryUnavailableException}. Device
 * pointers are {@code long}s: they cannot be dereferenced from Java. The calls act on the calling thread's current
 * device ({@link #setDevice(int)}).
 */
public final class CudaRuntime
{
    public static final String LIBRARY = "libcudart";
    static final List<String> CANDIDATES = List.of("libcudart.so", "libcudart.so.13", "libcudart.so.12");

    private CudaRuntime()
    {
    }

    /**
     * @return available when libcudart loads and reports at least one device; otherwise unavailable with a reason
     * naming libcudart (not installed, no driver, or no devices). Probed once per process.
     */
    public static Availability availability()
    {
        return Probe.AVAILABILITY;
    }

    static NativeLibrary library()
    {
        return Library.LIBRARY;
    }

    /**
     * The loader behind {@link #availability()}, taking the candidate file names so that a missing library can be
     * tested. When one loads, devices are counted through the process-wide runtime.
     */
    static Availability probe(final List<String> candidates)
    {
        final NativeLibrary library = candidates.equals(CANDIDATES) ? Library.LIBRARY :
            NativeLibrary.load(LIBRARY, candidates);
        if (!library.isLoaded())
        {
            return library.availability();
        }
        try
        {
            final int count = deviceCount();
            return count > 0 ? Availability.available(LIBRARY) :
                Availability.unavailable(LIBRARY, library.loadedName() + " loaded but there are no CUDA devices");
        }
        catch (final CudaException e)
        {
            return Availability.unavailable(LIBRARY, library.loadedName() + " loaded but " + e.getMessage());
        }
        catch (final RuntimeException | LinkageError e)
        {
            return Availability.unavailable(LIBRARY, "probing " + library.loadedName() + " failed: " + e);
        }
    }

    /**
     * {@code cudaGetDeviceCount}.
     */
    public static int deviceCount()
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment count = arena.allocate(JAVA_INT);
            check((int)CudaFunctions.GET_DEVICE_COUNT.invokeExact(count), "cudaGetDeviceCount", null);
            return count.get(JAVA_INT, 0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code cudaSetDevice}: the device the calling thread's later calls use.
     */
    public static void setDevice(final int device)
    {
        requireLoaded();
        try
        {
            check((int)CudaFunctions.SET_DEVICE.invokeExact(device), "cudaSetDevice", "device=" + device);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code cudaGetDevice}: the calling thread's current device.
     */
    public static int getDevice()
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment device = arena.allocate(JAVA_INT);
            check((int)CudaFunctions.GET_DEVICE.invokeExact(device), "cudaGetDevice", null);
            return device.get(JAVA_INT, 0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code cudaDeviceGetPCIBusId}.
     *
     * @return e.g. {@code "0000:1b:00.0"}, as in sysfs (lower-cased; the runtime prints upper-case hex).
     */
    public static String pciBusId(final int device)
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment text = arena.allocate(CudaLayouts.PCI_BUS_ID_LENGTH);
            check((int)CudaFunctions.DEVICE_GET_PCI_BUS_ID.invokeExact(text, CudaLayouts.PCI_BUS_ID_LENGTH, device),
                "cudaDeviceGetPCIBusId", "device=" + device);
            return text.getString(0).toLowerCase(Locale.ROOT);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code cudaPointerGetAttributes}.
     */
    public static CudaPointerAttributes pointerAttributes(final long pointer)
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attributes = arena.allocate(CudaLayouts.CUDA_POINTER_ATTRIBUTES);
            check((int)CudaFunctions.POINTER_GET_ATTRIBUTES.invokeExact(attributes, pointer),
                "cudaPointerGetAttributes", String.format("ptr=0x%x", pointer));
            return new CudaPointerAttributes(attributes.get(JAVA_INT, 0), attributes.get(JAVA_INT, 4),
                attributes.get(JAVA_LONG, 8), attributes.get(JAVA_LONG, 16));
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code cudaIpcGetMemHandle} of a {@link #malloc(long)} allocation (its base address).
     */
    public static CudaIpcMemHandle ipcGetMemHandle(final long devicePointer)
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment handle = arena.allocate(CudaLayouts.CUDA_IPC_MEM_HANDLE);
            check((int)CudaFunctions.IPC_GET_MEM_HANDLE.invokeExact(handle, devicePointer),
                "cudaIpcGetMemHandle", String.format("ptr=0x%x", devicePointer));
            return CudaIpcMemHandle.of(handle.toArray(ValueLayout.JAVA_BYTE));
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code cudaIpcOpenMemHandle} with {@code cudaIpcMemLazyEnablePeerAccess}: maps another process's allocation
     * into this one. Not possible in the process that exported the handle.
     *
     * @return the device pointer in this process; release with {@link #ipcCloseMemHandle(long)}.
     */
    public static long ipcOpenMemHandle(final CudaIpcMemHandle handle)
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment pointer = arena.allocate(ADDRESS);
            final MemorySegment value = arena.allocate(CudaLayouts.CUDA_IPC_MEM_HANDLE);
            MemorySegment.copy(handle.bytes(), 0, value, ValueLayout.JAVA_BYTE, 0,
                CudaLayouts.IPC_HANDLE_SIZE);
            check((int)CudaFunctions.IPC_OPEN_MEM_HANDLE.invokeExact(pointer, value,
                CudaLayouts.IPC_MEM_LAZY_ENABLE_PEER_ACCESS), "cudaIpcOpenMemHandle", null);
            return pointer.get(JAVA_LONG, 0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    public static void ipcCloseMemHandle(final long devicePointer)
    {
        call1(CudaFunctions.IPC_CLOSE_MEM_HANDLE, "cudaIpcCloseMemHandle", devicePointer);
    }

    /**
     * {@code cudaMalloc} on the current device.
     */
    public static long malloc(final long size)
    {
        return allocate(CudaFunctions.MALLOC, "cudaMalloc", size);
    }

    public static void free(final long devicePointer)
    {
        call1(CudaFunctions.FREE, "cudaFree", devicePointer);
    }

    /**
     * {@code cudaMallocHost}: page-locked host memory, usable by both the CPU and DMA.
     *
     * @return the memory as a segment of {@code size} bytes; release with {@link #freeHost(MemorySegment)}.
     */
    @SuppressWarnings("restricted")
    public static MemorySegment mallocHost(final long size)
    {
        return MemorySegment.ofAddress(allocate(CudaFunctions.MALLOC_HOST, "cudaMallocHost", size))
            .reinterpret(size);
    }

    public static void freeHost(final MemorySegment pinned)
    {
        call1(CudaFunctions.FREE_HOST, "cudaFreeHost", pinned.address());
    }

    /**
     * {@code cudaMemcpy} of {@code count} bytes; synchronous for host memory, and for device-to-device copies
     * returns once the copy is queued (use {@link #deviceSynchronize()} to wait).
     *
     * @param kind {@code CudaLayouts.MEMCPY_*}.
     */
    public static void memcpy(final long destination, final long source, final long count, final int kind)
    {
        final int code;
        try
        {
            code = (int)CudaFunctions.MEMCPY.invokeExact(destination, source, count, kind);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
        if (code != CudaLayouts.CUDA_SUCCESS)
        {
            throw exception("cudaMemcpy", code, String.format("dst=0x%x src=0x%x count=%d kind=%d",
                destination, source, count, kind));
        }
    }

    /**
     * {@code cudaStreamCreateWithFlags} on the calling thread's current device.
     *
     * @param flags {@code CudaLayouts.STREAM_*}.
     * @return the stream (a {@code cudaStream_t}); destroy with {@link #streamDestroy(long)}.
     */
    public static long streamCreate(final int flags)
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment stream = arena.allocate(JAVA_LONG);
            check((int)CudaFunctions.STREAM_CREATE_WITH_FLAGS.invokeExact(stream, flags), "cudaStreamCreateWithFlags",
                null);
            return stream.get(JAVA_LONG, 0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    public static void streamDestroy(final long stream)
    {
        call1(CudaFunctions.STREAM_DESTROY, "cudaStreamDestroy", stream);
    }

    /**
     * {@code cudaStreamSynchronize}: waits for this stream's work only, not for other threads' streams.
     */
    public static void streamSynchronize(final long stream)
    {
        final int code;
        try
        {
            code = (int)CudaFunctions.STREAM_SYNCHRONIZE.invokeExact(stream);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
        // on the data path: no detail string unless it failed
        if (code != CudaLayouts.CUDA_SUCCESS)
        {
            throw exception("cudaStreamSynchronize", code, String.format("stream=0x%x", stream));
        }
    }

    /**
     * {@code cudaMemcpyAsync} of {@code count} bytes on {@code stream}; wait with {@link #streamSynchronize(long)}.
     *
     * @param kind {@code CudaLayouts.MEMCPY_*}.
     */
    public static void memcpyAsync(
        final long destination, final long source, final long count, final int kind, final long stream)
    {
        final int code;
        try
        {
            code = (int)CudaFunctions.MEMCPY_ASYNC.invokeExact(destination, source, count, kind, stream);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
        if (code != CudaLayouts.CUDA_SUCCESS)
        {
            throw exception("cudaMemcpyAsync", code, String.format("dst=0x%x src=0x%x count=%d kind=%d",
                destination, source, count, kind));
        }
    }

    public static void deviceSynchronize()
    {
        requireLoaded();
        try
        {
            check((int)CudaFunctions.DEVICE_SYNCHRONIZE.invokeExact(), "cudaDeviceSynchronize", null);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @return {@code cudaGetErrorString(code)}.
     */
    @SuppressWarnings("restricted")
    public static String errorString(final int code)
    {
        requireLoaded();
        try
        {
            return ((MemorySegment)CudaFunctions.GET_ERROR_STRING.invokeExact(code)).reinterpret(1024).getString(0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    @SuppressWarnings("restricted")
    static String errorName(final int code)
    {
        try
        {
            return ((MemorySegment)CudaFunctions.GET_ERROR_NAME.invokeExact(code)).reinterpret(256).getString(0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private static long allocate(final MethodHandle handle, final String function, final long size)
    {
        requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment pointer = arena.allocate(ADDRESS);
            check((int)handle.invokeExact(pointer, size), function, "size=" + size);
            return pointer.get(JAVA_LONG, 0);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private static void call1(final MethodHandle handle, final String function, final long pointer)
    {
        requireLoaded();
        try
        {
            check((int)handle.invokeExact(pointer), function, String.format("ptr=0x%x", pointer));
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private static void requireLoaded()
    {
        Library.LIBRARY.requireLoaded();
    }

    private static void check(final int code, final String function, final String detail)
    {
        if (code != CudaLayouts.CUDA_SUCCESS)
        {
            throw exception(function, code, detail);
        }
    }

    private static CudaException exception(final String function, final int code, final String detail)
    {
        return new CudaException(function, code, errorName(code), errorString(code), detail);
    }

    private static RuntimeException rethrow(final Throwable t)
    {
        if (t instanceof RuntimeException re)
        {
            return re;
        }
        if (t instanceof Error e)
        {
            throw e;
        }
        return new IllegalStateException("unexpected checked exception from a downcall", t);
    }

    private static final class Library
    {
        static final NativeLibrary LIBRARY = NativeLibrary.load(CudaRuntime.LIBRARY, CANDIDATES);
    }

    private static final class Probe
    {
        static final Availability AVAILABILITY = probe(CANDIDATES);
    }
}
