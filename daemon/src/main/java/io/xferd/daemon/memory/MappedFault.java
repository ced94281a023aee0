package io.xferd.daemon.memory;

/**
 * A fault on mapped memory as the JVM reports it: HotSpot's SIGBUS handler turns a fault inside an Unsafe access or
 * copy ({@code MemorySegment.copy}, a direct {@code ByteBuffer.put}) into an {@link InternalError} thrown at the
 * faulting call, and the thread lives on. A file truncated under a mapping of it is the usual cause.
 */
public final class MappedFault
{
    private MappedFault()
    {
    }

    /**
     * @return true for the InternalError of a fault in an unsafe memory access ("a fault occurred in an unsafe
     * memory access operation", or "in a recent unsafe memory access operation in compiled Java code").
     */
    public static boolean is(final InternalError error)
    {
        final String message = error.getMessage();
        return message != null && message.contains("unsafe memory access");
    }
}
