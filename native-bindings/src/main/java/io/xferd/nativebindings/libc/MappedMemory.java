package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code mmap(2)}, {@code munmap(2)}, {@code mlock(2)} and {@code madvise(2)}.
 * <p>
 * Mappings are returned as global-scope segments of exactly the requested length whose {@code address()} is the
 * virtual address of the mapping; the caller owns it and must {@link #unmap(MemorySegment)} it, after which any
 * access through the segment is a crash, not an exception.
 */
@SuppressWarnings("restricted")
public final class MappedMemory
{
    static final int PROT_READ = 1;
    static final int PROT_WRITE = 2;
    static final int MAP_SHARED = 0x01;
    static final int MAP_PRIVATE = 0x02;
    static final int MAP_ANONYMOUS = 0x20;
    static final int MAP_POPULATE = 0x8000;
    static final int MADV_HUGEPAGE = 14;
    static final long MAP_FAILED = -1L;

    // Pointers are passed and returned as longs: these calls take raw addresses, and no segment is allocated.
    private static final MethodHandle MMAP = Libc.downcallCapturingErrno("mmap",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP =
        Libc.downcallCapturingErrno("munmap", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle MINCORE =
        Libc.downcallCapturingErrno("mincore", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /** The kernel's page size: mappings start at its multiples ({@code 4096} on x86-64; 4, 16 or 64 KiB on aarch64). */
    public static final long PAGE_SIZE = pageSize();
    private static final long PAGE = PAGE_SIZE;
    private static final MethodHandle MLOCK =
        Libc.downcallCapturingErrno("mlock", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle MADVISE =
        Libc.downcallCapturingErrno("madvise", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));

    private MappedMemory()
    {
    }

    private static long pageSize()
    {
        try
        {
            return (int)Libc.downcall("getpagesize", FunctionDescriptor.of(JAVA_INT)).invokeExact();
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Maps {@code length} bytes of {@code fd} from {@code offset} (a multiple of the page size), read-write and
     * shared, so that writes are seen by every other mapping of the same file.
     */
    public static MemorySegment mapShared(final int fd, final long offset, final long length)
    {
        return map(length, MAP_SHARED, fd, offset);
    }

    /**
     * As {@link #mapShared}, with the page tables filled at once (MAP_POPULATE): the daemon maps a client's
     * memory this way so that the first transfer into it does not take a page fault per 4 KiB.
     */
    public static MemorySegment mapSharedPopulated(final int fd, final long offset, final long length)
    {
        return map(length, MAP_SHARED | MAP_POPULATE, fd, offset);
    }

    /**
     * As {@link #mapShared}, readable only: for a descriptor opened read-only (a read-write shared mapping needs
     * {@code O_RDWR}).
     */
    public static MemorySegment mapSharedReadOnly(final int fd, final long offset, final long length)
    {
        return map(length, PROT_READ, MAP_SHARED, fd, offset);
    }

    /**
     * Maps {@code length} bytes of private, zero-filled anonymous memory.
     */
    public static MemorySegment mapAnonymous(final long length)
    {
        return map(length, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }

    public static void unmap(final MemorySegment segment)
    {
        call(MUNMAP, "munmap", segment);
    }

    /**
     * {@code mincore(2)}, a chunk at a time: whether every page under {@code [address, address + length)} of a
     * mapping is in memory. For a shared mapping of a tmpfs file, a page that is not is a hole (or swapped out).
     * Costs a page-cache lookup per page of the range, nothing beyond it.
     *
     * @param vector scratch of at least one byte (one per page of a chunk; its size sets the chunk).
     * @return true when all are; false when one is not, or the range is not mapped.
     */
    public static boolean allResident(final long address, final long length, final MemorySegment vector)
    {
        final long chunk = vector.byteSize() * PAGE;
        long from = address & -PAGE;
        final long end = address + length;
        while (from < end)
        {
            final long span = Math.min(chunk, end - from);
            final int result;
            try
            {
                result = (int)MINCORE.invokeExact(CallScratch.capture(), from, span, vector.address());
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (result != 0)
            {
                return false;
            }
            final long pages = (span + PAGE - 1) / PAGE;
            for (long i = 0; i < pages; i++)
            {
                if ((vector.get(JAVA_BYTE, i) & 1) == 0)
                {
                    return false;
                }
            }
            from += span;
        }
        return true;
    }

    /**
     * Locks the pages in RAM; fails with ENOMEM or EPERM beyond {@code RLIMIT_MEMLOCK}.
     */
    public static void lock(final MemorySegment segment)
    {
        call(MLOCK, "mlock", segment);
    }

    /**
     * Asks for transparent huge pages; EINVAL (THP not built in, or a mapping that cannot have them) is ignored.
     */
    public static void adviseHugePages(final MemorySegment segment)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)MADVISE.invokeExact(capture, segment.address(), segment.byteSize(), MADV_HUGEPAGE);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result != 0)
        {
            final int errno = CallScratch.errno(capture);
            if (errno != Errno.EINVAL)
            {
                throw new NativeException("madvise", errno, describe(segment));
            }
        }
    }

    private static MemorySegment map(final long length, final int flags, final int fd, final long offset)
    {
        return map(length, PROT_READ | PROT_WRITE, flags, fd, offset);
    }

    private static MemorySegment map(
        final long length, final int protection, final int flags, final int fd, final long offset)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        final MemorySegment capture = CallScratch.capture();
        final long address;
        try
        {
            address = (long)MMAP.invokeExact(capture, 0L, length, protection, flags, fd, offset);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (address == MAP_FAILED)
        {
            throw new NativeException(
                "mmap", CallScratch.errno(capture), "fd=" + fd + " offset=" + offset + " length=" + length);
        }
        return MemorySegment.ofAddress(address).reinterpret(length);
    }

    private static void call(final MethodHandle handle, final String function, final MemorySegment segment)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)handle.invokeExact(capture, segment.address(), segment.byteSize());
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result != 0)
        {
            throw new NativeException(function, CallScratch.errno(capture), describe(segment));
        }
    }

    private static String describe(final MemorySegment segment)
    {
        return "address=0x" + Long.toHexString(segment.address()) + " length=" + segment.byteSize();
    }
}
