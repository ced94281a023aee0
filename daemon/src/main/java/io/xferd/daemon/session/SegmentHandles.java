package io.xferd.daemon.session;

/**
 * Segment handles as the daemon hands them out: opaque longs to clients. A local segment is
 * {@code generation << 32 | slot}, generation starting at 1, so a handle to a segment whose owner left stays
 * invalid even after its slot is reused. Handle 0 is never valid.
 */
public final class SegmentHandles
{
    private SegmentHandles()
    {
    }

    public static long local(final int slot, final int generation)
    {
        return ((long)generation << 32) | (slot & 0xFFFF_FFFFL);
    }

    public static int slot(final long handle)
    {
        return (int)handle;
    }

    public static int generation(final long handle)
    {
        return (int)(handle >>> 32);
    }
}
