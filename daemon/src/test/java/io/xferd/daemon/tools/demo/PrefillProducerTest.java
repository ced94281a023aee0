package io.xferd.daemon.tools.demo;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The demo's steady figure: the median GB/s of stretches of batch completions, which one stall of the machine (a
 * descheduled process for tens of milliseconds) does not move, where it halves the pass's overall figure.
 */
class PrefillProducerTest
{
    private static final long BATCH_BYTES = 1_000_000;

    @Test
    void shouldReportTheMedianStretchNotTheStall()
    {
        final int batches = 8 * PrefillProducer.STRETCH_BATCHES + 1;
        final long[] nanos = new long[batches];
        final long[] bytes = new long[batches];
        long now = 0;
        for (int i = 0; i < batches; i++)
        {
            now += i == 20 ? 50_000_000 : 250_000; // 4 GB/s, but for one stall of 50 ms
            nanos[i] = now;
            bytes[i] = (i + 1) * BATCH_BYTES;
        }

        final double overall = (bytes[batches - 1] - bytes[0]) / (double)(nanos[batches - 1] - nanos[0]);
        assertThat(overall).as("the stall halves the pass's figure").isLessThan(1.0);
        assertThat(PrefillProducer.steadyGbps(nanos, bytes, batches)).isCloseTo(4.0, within(1e-9));
    }

    @Test
    void shouldPushOtherBytesInWarmUpThanInTheTimedPassFromTheFirstWordOfEveryLayer()
    {
        // what the consumer verifies must be the timed pass's: a timed pass that landed nothing leaves warm-up bytes
        final SplittableRandom seeds = new SplittableRandom(20261202);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment layer = arena.allocate(4096);
            for (int i = 0; i < 100; i++)
            {
                final long seed = i < 2 ? i - 1 : seeds.nextLong(); // -1 and 0 too
                assertThat(PrefillProducer.warmUpSeed(seed)).isNotEqualTo(seed);
                for (int index = 0; index < 28; index++)
                {
                    KvCacheLayout.fill(layer, PrefillProducer.warmUpSeed(seed), index);
                    assertThat(KvCacheLayout.firstMismatch(layer, seed, index)).as("seed %d layer %d", seed, index)
                        .isZero();
                }
            }
        }
    }

    @Test
    void shouldCountTheBytesEachStretchMovedWhenBatchesDifferInSize()
    {
        final int batches = 2 * PrefillProducer.STRETCH_BATCHES + 1;
        final long[] nanos = new long[batches];
        final long[] bytes = new long[batches];
        long moved = 0;
        for (int i = 0; i < batches; i++)
        {
            moved += i % 3 == 0 ? BATCH_BYTES / 8 : BATCH_BYTES; // a layer's last batch is short
            nanos[i] = i * 1_000_000L;
            bytes[i] = moved;
        }

        final double first = (bytes[8] - bytes[0]) / 8e6;
        final double second = (bytes[16] - bytes[8]) / 8e6;
        assertThat(PrefillProducer.steadyGbps(nanos, bytes, batches)).isCloseTo((first + second) / 2, within(1e-9));
        assertThat(PrefillProducer.steadyGbps(nanos, bytes, PrefillProducer.STRETCH_BATCHES)).as("too few").isZero();
    }
}
