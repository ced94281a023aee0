package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * CPU affinity of the calling thread: {@code sched_setaffinity(0, ...)} / {@code sched_getaffinity(0, ...)} on a
 * {@code cpu_set_t} bit mask (bit n of 64-bit word n / 64 is CPU n), sized for at least 1024 CPUs and grown when the
 * kernel has more.
 */
public final class Affinity
{
    private static final int MIN_MASK_BYTES = 128;
    private static final int MAX_MASK_BYTES = 1 << 16;

    private static final MethodHandle SET = Libc.downcallCapturingErrno(
        "sched_setaffinity", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS));
    private static final MethodHandle GET = Libc.downcallCapturingErrno(
        "sched_getaffinity", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS));

    private Affinity()
    {
    }

    /**
     * Restricts the calling thread to {@code cpus}.
     */
    public static void pinCurrentThread(final int... cpus)
    {
        if (cpus.length == 0)
        {
            throw new IllegalArgumentException("at least one cpu is needed");
        }
        int max = 0;
        for (final int cpu : cpus)
        {
            if (cpu < 0 || cpu >= MAX_MASK_BYTES * 8)
            {
                throw new IllegalArgumentException("cpu out of range: " + cpu);
            }
            max = Math.max(max, cpu);
        }
        final long bytes = Math.max(MIN_MASK_BYTES, ((max / 64) + 1) * 8L);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mask = arena.allocate(bytes, 8);
            for (final int cpu : cpus)
            {
                final long word = (cpu / 64) * 8L;
                mask.set(JAVA_LONG, word, mask.get(JAVA_LONG, word) | (1L << (cpu % 64)));
            }
            final MemorySegment capture = CallScratch.capture();
            if ((int)SET.invokeExact(capture, 0, bytes, mask) != 0)
            {
                throw new NativeException(
                    "sched_setaffinity", CallScratch.errno(capture), "cpus=" + Arrays.toString(cpus));
            }
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * @return the CPUs the calling thread may run on, ascending.
     */
    public static int[] currentAffinity()
    {
        for (int bytes = MIN_MASK_BYTES; bytes <= MAX_MASK_BYTES; bytes *= 2)
        {
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment mask = arena.allocate(bytes, 8);
                final MemorySegment capture = CallScratch.capture();
                if ((int)GET.invokeExact(capture, 0, (long)bytes, mask) == 0)
                {
                    return cpus(mask);
                }
                final int errno = CallScratch.errno(capture);
                if (errno != Errno.EINVAL)
                {
                    throw new NativeException("sched_getaffinity", errno);
                }
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
        }
        throw new NativeException("sched_getaffinity", Errno.EINVAL, "mask larger than " + MAX_MASK_BYTES + " bytes");
    }

    private static int[] cpus(final MemorySegment mask)
    {
        final int words = (int)(mask.byteSize() / 8);
        int count = 0;
        for (int w = 0; w < words; w++)
        {
            count += Long.bitCount(mask.get(JAVA_LONG, w * 8L));
        }
        final int[] cpus = new int[count];
        int i = 0;
        for (int w = 0; w < words; w++)
        {
            long bits = mask.get(JAVA_LONG, w * 8L);
            while (bits != 0)
            {
                cpus[i++] = w * 64 + Long.numberOfTrailingZeros(bits);
                bits &= bits - 1;
            }
        }
        return cpus;
    }
}
