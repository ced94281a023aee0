package io.xferd.daemon.tools.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The bytes a verified bench run expects: a function of (seed, offset from the start of the target buffer), so
 * the target fills its whole buffer once and any thread can check any range of it without coordination. Each
 * 8-byte word is a SplitMix64 mix of the seed and the word's index, little-endian.
 */
public final class BenchPattern
{
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private BenchPattern()
    {
    }

    static long word(final long seed, final long wordIndex)
    {
        long z = seed + (wordIndex + 1) * 0x9E37_79B9_7F4A_7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    static byte byteAt(final long seed, final long offset)
    {
        return (byte)(word(seed, offset >>> 3) >>> (8 * (offset & 7)));
    }

    /**
     * Fill {@code memory} with the pattern's bytes at offsets [base, base + memory.byteSize()).
     */
    public static void fill(final MemorySegment memory, final long seed, final long base)
    {
        final long length = memory.byteSize();
        long i = 0;
        for (; i < length && ((base + i) & 7) != 0; i++)
        {
            memory.set(ValueLayout.JAVA_BYTE, i, byteAt(seed, base + i));
        }
        for (; i + 8 <= length; i += 8)
        {
            memory.set(WORD, i, word(seed, (base + i) >>> 3));
        }
        for (; i < length; i++)
        {
            memory.set(ValueLayout.JAVA_BYTE, i, byteAt(seed, base + i));
        }
    }

    /**
     * @return the first offset within {@code memory} whose byte differs from the pattern at [base, ...), or -1.
     */
    public static long firstMismatch(final MemorySegment memory, final long seed, final long base)
    {
        final long length = memory.byteSize();
        long i = 0;
        for (; i < length && ((base + i) & 7) != 0; i++)
        {
            if (memory.get(ValueLayout.JAVA_BYTE, i) != byteAt(seed, base + i))
            {
                return i;
            }
        }
        for (; i + 8 <= length; i += 8)
        {
            if (memory.get(WORD, i) != word(seed, (base + i) >>> 3))
            {
                for (int b = 0; b < 8; b++)
                {
                    if (memory.get(ValueLayout.JAVA_BYTE, i + b) != byteAt(seed, base + i + b))
                    {
                        return i + b;
                    }
                }
            }
        }
        for (; i < length; i++)
        {
            if (memory.get(ValueLayout.JAVA_BYTE, i) != byteAt(seed, base + i))
            {
                return i;
            }
        }
        return -1;
    }
}
