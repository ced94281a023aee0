package io.xferd.nativebindings.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A 128-bit {@code union ibv_gid}: the two big-endian halves read as numbers, so that {@link #toString()} prints
 * the GID as it appears in {@code show_gids} (for RoCE v2, an IPv6 or IPv4-mapped address).
 *
 * @param subnetPrefix the first 8 bytes, big-endian.
 * @param interfaceId  the last 8 bytes, big-endian.
 */
public record Gid(long subnetPrefix, long interfaceId)
{
    static final ValueLayout.OfLong BIG_ENDIAN_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    static Gid read(final MemorySegment segment, final long offset)
    {
        return new Gid(segment.get(BIG_ENDIAN_LONG, offset), segment.get(BIG_ENDIAN_LONG, offset + 8));
    }

    void write(final MemorySegment segment, final long offset)
    {
        segment.set(BIG_ENDIAN_LONG, offset, subnetPrefix);
        segment.set(BIG_ENDIAN_LONG, offset + 8, interfaceId);
    }

    public boolean isZero()
    {
        return subnetPrefix == 0 && interfaceId == 0;
    }

    @Override
    public String toString()
    {
        final StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++)
        {
            final long half = i < 4 ? subnetPrefix : interfaceId;
            final int shift = 48 - 16 * (i % 4);
            sb.append(i == 0 ? "" : ":").append(String.format("%04x", (half >>> shift) & 0xFFFF));
        }
        return sb.toString();
    }
}
