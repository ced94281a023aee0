package io.xferd.nativebindings.cuda;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.NativeLibrary;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The one driver-API call the runtime API lacks: {@code cuMemGetAddressRange}, the base and size of the allocation
 * holding a device pointer, so that the daemon can check a range a client registers against the allocation it
 * opened. libcuda is loaded lazily (the runtime needs it anyway wherever a GPU is usable); the call acts in the
 * calling thread's current context, which a runtime call after {@link CudaRuntime#setDevice(int)} makes the device's
 * primary context.
 */
public final class CudaDriver
{
    public static final String LIBRARY = "libcuda";
    static final List<String> CANDIDATES = List.of("libcuda.so.1", "libcuda.so");

    private CudaDriver()
    {
    }

    /**
     * @return available when libcuda loads; says nothing about devices ({@link CudaRuntime#availability()} does).
     */
    public static Availability availability()
    {
        return Library.LIBRARY.availability();
    }

    /**
     * {@code cuMemGetAddressRange_v2}.
     *
     * @return how many bytes of its allocation lie from {@code pointer} on (the allocation's size for its base).
     * @throws CudaException                  (with the {@code CUresult}) when the driver does not know the pointer,
     *                                        or there is no current context.
     * @throws io.xferd.nativebindings.LibraryUnavailableException when libcuda did not load.
     */
    public static long bytesToEndOfAllocation(final long pointer)
    {
        Library.LIBRARY.requireLoaded();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment start = arena.allocate(JAVA_LONG);
            final MemorySegment size = arena.allocate(JAVA_LONG);
            final int code = (int)Functions.MEM_GET_ADDRESS_RANGE.invokeExact(start, size, pointer);
            if (code != 0)
            {
                throw new CudaException("cuMemGetAddressRange", code, "CUresult", "", String.format("ptr=0x%x",
                    pointer));
            }
            return size.get(JAVA_LONG, 0) - (pointer - start.get(JAVA_LONG, 0));
        }
        catch (final RuntimeException | Error e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw new IllegalStateException("unexpected checked exception from a downcall", t);
        }
    }

    private static final class Library
    {
        static final NativeLibrary LIBRARY = NativeLibrary.load(CudaDriver.LIBRARY, CANDIDATES);
    }

    private static final class Functions
    {
        // CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
        static final MethodHandle MEM_GET_ADDRESS_RANGE = Library.LIBRARY.downcall("cuMemGetAddressRange_v2",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    }
}
