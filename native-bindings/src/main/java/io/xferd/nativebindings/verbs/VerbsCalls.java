package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * errno capture and result checks shared by the verbs bindings; needs no library.
 */
@SuppressWarnings("restricted")
final class VerbsCalls
{
    private static final long ERRNO_OFFSET =
        Linker.Option.captureStateLayout().byteOffset(MemoryLayout.PathElement.groupElement("errno"));

    private VerbsCalls()
    {
    }

    static MemorySegment capture(final Arena arena)
    {
        return arena.allocate(Linker.Option.captureStateLayout());
    }

    static int errno(final MemorySegment capture)
    {
        return capture.get(JAVA_INT, ERRNO_OFFSET);
    }

    /**
     * @return {@code result} viewed as {@code size} bytes.
     * @throws NativeException with the captured errno when {@code result} is NULL.
     */
    static MemorySegment requireNonNull(
        final MemorySegment result, final long size, final MemorySegment capture, final String function,
        final String detail)
    {
        if (result.equals(MemorySegment.NULL))
        {
            throw new NativeException(function, errno(capture), detail);
        }
        return result.reinterpret(size);
    }

    /**
     * libibverbs returns either 0, an errno value, or -1 with errno set: any non-zero result is a failure.
     */
    static void requireZero(final int result, final MemorySegment capture, final String function, final String detail)
    {
        if (result != 0)
        {
            throw new NativeException(function, result > 0 ? result : errno(capture), detail);
        }
    }

    static RuntimeException rethrow(final Throwable t)
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
}
