package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The array {@code ibv_get_device_list} returns, freed with {@code ibv_free_device_list} on {@link #close()}. Open
 * the devices you need before closing it; contexts already opened stay valid.
 */
public final class VerbsDeviceList implements AutoCloseable
{
    private static final VerbsDeviceList EMPTY = new VerbsDeviceList(MemorySegment.NULL, List.of());

    private final MemorySegment array;
    private final List<VerbsDevice> devices;
    private boolean closed;

    private VerbsDeviceList(final MemorySegment array, final List<VerbsDevice> devices)
    {
        this.array = array;
        this.devices = devices;
    }

    @SuppressWarnings("restricted")
    static VerbsDeviceList open()
    {
        if (!Verbs.library().isLoaded())
        {
            return EMPTY;
        }
        final MemorySegment array;
        final int count;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment countOut = arena.allocate(JAVA_INT);
            array = (MemorySegment)VerbsFunctions.GET_DEVICE_LIST.invokeExact(capture, countOut);
            if (array.equals(MemorySegment.NULL))
            {
                final int errno = VerbsCalls.errno(capture);
                if (errno == Errno.ENOSYS)
                {
                    return EMPTY; // no uverbs support in this kernel: no devices
                }
                throw new NativeException("ibv_get_device_list", errno);
            }
            count = countOut.get(JAVA_INT, 0);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
        final MemorySegment entries = array.reinterpret(ADDRESS.byteSize() * (count + 1L));
        final List<VerbsDevice> devices = new ArrayList<>(count);
        try
        {
            for (int i = 0; i < count; i++)
            {
                final MemorySegment device = entries.getAtIndex(ADDRESS, i);
                final MemorySegment name = (MemorySegment)VerbsFunctions.GET_DEVICE_NAME.invokeExact(device);
                final long guid = (long)VerbsFunctions.GET_DEVICE_GUID.invokeExact(device);
                devices.add(new VerbsDevice(device, name.reinterpret(256).getString(0), Long.reverseBytes(guid)));
            }
        }
        catch (final Throwable t)
        {
            free(array);
            throw VerbsCalls.rethrow(t);
        }
        return new VerbsDeviceList(array, List.copyOf(devices));
    }

    public List<VerbsDevice> devices()
    {
        return devices;
    }

    public boolean isEmpty()
    {
        return devices.isEmpty();
    }

    @Override
    public void close()
    {
        if (!closed && !array.equals(MemorySegment.NULL))
        {
            closed = true;
            free(array);
        }
    }

    private static void free(final MemorySegment array)
    {
        try
        {
            VerbsFunctions.FREE_DEVICE_LIST.invokeExact(array);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }
}
