package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.Region;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Faults on mapped memory, as the JVM reports them: HotSpot's SIGBUS handler turns a fault inside an Unsafe access
 * or copy (which {@link MemorySegment#copy} is) into a {@link InternalError} thrown at the faulting call, and the
 * thread lives on. Checked on this JDK (Temurin 25): a memfd mapped, truncated from a second descriptor, then copied
 * into and out of, interpreted, C1 and C2 alike, 3000 times each.
 */
final class MemoryFaults
{
    static final long PAGE_SIZE = 4096;

    @SuppressWarnings("unused")
    private static volatile int sink;

    private MemoryFaults()
    {
    }

    /**
     * @return true for the InternalError of a fault in an unsafe memory access ("a fault occurred in an unsafe
     * memory access operation", or "in a recent unsafe memory access operation in compiled Java code").
     */
    static boolean isMemoryFault(final InternalError error)
    {
        final String message = error.getMessage();
        return message != null && message.contains("unsafe memory access");
    }

    /**
     * Touch one byte of every page of {@code [address, address + length)} of a mapped region (reads only): the
     * fault path's way to learn whose file shrank. Costs a read per 4 KiB, only after a copy faulted.
     *
     * @return true when a page of the range faults now.
     */
    static boolean faults(final Region region, final long address, final long length)
    {
        if (!region.isMapped())
        {
            return false;
        }
        final MemorySegment mapping = region.mapping();
        final long start = region.offsetOf(address);
        try
        {
            int sum = mapping.get(ValueLayout.JAVA_BYTE, start + length - 1);
            for (long offset = start; offset < start + length; offset += PAGE_SIZE)
            {
                sum += mapping.get(ValueLayout.JAVA_BYTE, offset);
            }
            sink = sum; // so that the compiler keeps the reads
            return false;
        }
        catch (final InternalError error)
        {
            if (!isMemoryFault(error))
            {
                throw error;
            }
            return true;
        }
    }
}
