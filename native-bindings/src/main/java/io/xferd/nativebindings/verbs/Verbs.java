package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeLibrary;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Entry point of the libibverbs bindings: loads {@code libibverbs.so.1} lazily, on first use, and says whether RDMA
 * can be used on this host. Nothing here throws at class initialisation; a host without the library or without
 * devices gets an unavailable {@link Availability} naming the reason, so the daemon can refuse {@code protocol: rdma}
 * with a clear message (it never falls back to TCP silently).
 */
public final class Verbs
{
    public static final String LIBRARY = "libibverbs";
    public static final String LIBRARY_FILE = "libibverbs.so.1";

    private Verbs()
    {
    }

    /**
     * @return available when libibverbs loads and lists at least one RDMA device; otherwise unavailable with a
     * reason naming the missing library or saying that there are no RDMA devices. Probed once per process.
     */
    public static Availability availability()
    {
        return Probe.AVAILABILITY;
    }

    /**
     * @return the process-wide library handle (loaded or not).
     */
    static NativeLibrary library()
    {
        return Library.LIBRARY;
    }

    /**
     * Loads {@code fileName} as libibverbs and counts its devices; the loader behind {@link #availability()},
     * taking the file name so that a missing library can be tested.
     */
    static Availability probe(final String fileName)
    {
        return probe(NativeLibrary.load(LIBRARY, List.of(fileName)));
    }

    @SuppressWarnings("restricted")
    static Availability probe(final NativeLibrary library)
    {
        if (!library.isLoaded())
        {
            return library.availability();
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MethodHandle getList = library.downcall("ibv_get_device_list",
                FunctionDescriptor.of(ADDRESS, ADDRESS), Linker.Option.captureCallState("errno"));
            final MethodHandle freeList = library.downcall("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment count = arena.allocate(JAVA_INT);
            final MemorySegment list = (MemorySegment)getList.invokeExact(capture, count);
            if (list.equals(MemorySegment.NULL))
            {
                final int errno = VerbsCalls.errno(capture);
                return Availability.unavailable(LIBRARY, noDevices(library.loadedName(), errno));
            }
            final int devices = count.get(JAVA_INT, 0);
            freeList.invokeExact(list);
            return devices > 0 ? Availability.available(LIBRARY) :
                Availability.unavailable(LIBRARY, "no RDMA devices (" + library.loadedName() +
                    " loaded, ibv_get_device_list found 0 devices)");
        }
        catch (final Throwable t)
        {
            return Availability.unavailable(LIBRARY, "probing " + library.loadedName() + " failed: " + t);
        }
    }

    static String noDevices(final String loadedName, final int errno)
    {
        return "no RDMA devices (" + loadedName + " loaded, ibv_get_device_list failed: " + Errno.name(errno) +
            " (" + errno + ")" + (errno == Errno.ENOSYS ? ", the kernel exposes no uverbs devices)" : ")");
    }

    private static final class Library
    {
        static final NativeLibrary LIBRARY = NativeLibrary.load(Verbs.LIBRARY, List.of(LIBRARY_FILE));
    }

    private static final class Probe
    {
        static final Availability AVAILABILITY = probe(Library.LIBRARY);
    }
}
