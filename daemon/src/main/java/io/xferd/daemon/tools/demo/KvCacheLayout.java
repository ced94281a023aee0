package io.xferd.daemon.tools.demo;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The shape of a paged KV cache as vLLM lays it out per layer: one region per layer holding
 * {@code blocks} blocks of 16 tokens, each token's K and V for every KV head. Defaults are Qwen2.5-7B's
 * (28 layers, 4 KV heads, head dim 128, fp16: 2,048 bytes per token per layer, 57,344 per token).
 */
public record KvCacheLayout(int layers, int blocks, int kvHeads, int headDim, int bytesPerElement)
{
    public static final int TOKENS_PER_BLOCK = 16;

    public static KvCacheLayout qwen25_7b(final int blocks)
    {
        return new KvCacheLayout(28, blocks, 4, 128, 2);
    }

    /**
     * @return a layout of Qwen2.5-7B's shape whose total is about {@code totalBytes}.
     */
    public static KvCacheLayout qwen25_7bOfSize(final long totalBytes)
    {
        final KvCacheLayout unit = qwen25_7b(1);
        return qwen25_7b((int)Math.max(1, totalBytes / (unit.blockBytes() * unit.layers())));
    }

    /** K and V of one token in one layer. */
    public long tokenBytesPerLayer()
    {
        return 2L * kvHeads * headDim * bytesPerElement;
    }

    public long blockBytes()
    {
        return TOKENS_PER_BLOCK * tokenBytesPerLayer();
    }

    public long layerBytes()
    {
        return blockBytes() * blocks;
    }

    public long totalBytes()
    {
        return layerBytes() * layers;
    }

    /**
     * Fill one layer's region with the pseudo-random bytes that {@link #firstMismatch} expects.
     */
    public static void fill(final MemorySegment layer, final long seed, final int layerIndex)
    {
        final SplittableRandom random = new SplittableRandom(seed * 31 + layerIndex);
        final long words = layer.byteSize() / 8;
        for (long i = 0; i < words; i++)
        {
            layer.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
    }

    /**
     * @return the offset of the first byte that differs from what {@link #fill} wrote, or -1.
     */
    public static long firstMismatch(final MemorySegment layer, final long seed, final int layerIndex)
    {
        final SplittableRandom random = new SplittableRandom(seed * 31 + layerIndex);
        final long words = layer.byteSize() / 8;
        for (long i = 0; i < words; i++)
        {
            if (layer.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i) != random.nextLong())
            {
                return i * 8;
            }
        }
        return -1;
    }
}
