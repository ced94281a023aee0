package io.xferd.daemon.tools.bench;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The bench's option values and its verify pattern.
 */
class BenchUnitsTest
{
    @Test
    void shouldParseSizesWithBinaryAndDecimalUnits()
    {
        assertThat(Units.parseBytes("4096")).isEqualTo(4096);
        assertThat(Units.parseBytes("64KiB")).isEqualTo(65_536);
        assertThat(Units.parseBytes("1MiB")).isEqualTo(1 << 20);
        assertThat(Units.parseBytes("1m")).isEqualTo(1 << 20);
        assertThat(Units.parseBytes("2GiB")).isEqualTo(2L << 30);
        assertThat(Units.parseBytes("1.5KiB")).isEqualTo(1536);
        assertThat(Units.parseBytes("10MB")).isEqualTo(10_000_000);
        assertThatThrownBy(() -> Units.parseBytes("lots")).hasMessageContaining("not a size");
        assertThatThrownBy(() -> Units.parseBytes("3furlongs")).hasMessageContaining("unknown size unit");
        assertThatThrownBy(() -> Units.parseBytes("0.3B")).hasMessageContaining("whole number");
        assertThat(Units.formatBytes(1 << 20)).isEqualTo("1 MiB");
        assertThat(Units.formatBytes(32_768)).isEqualTo("32 KiB");
        assertThat(Units.formatBytes(1000)).isEqualTo("1000 B");
    }

    @Test
    void shouldParseDurations()
    {
        assertThat(Units.parseDuration("10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Units.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Units.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Units.parseDuration("3")).isEqualTo(Duration.ofSeconds(3));
        assertThat(Units.parseDuration("0.25s")).isEqualTo(Duration.ofMillis(250));
        assertThatThrownBy(() -> Units.parseDuration("5 fortnights")).hasMessageContaining("unknown duration unit");
    }

    @Test
    void shouldCheckAnyRangeOfThePatternAgainstTheWholeFill()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment whole = arena.allocate(4099);
            BenchPattern.fill(whole, 42, 0);
            // an unaligned range filled on its own matches the same range of the whole
            final MemorySegment part = arena.allocate(1001);
            BenchPattern.fill(part, 42, 1003);
            assertThat(MemorySegment.mismatch(part, 0, 1001, whole, 1003, 2004)).isEqualTo(-1);
            assertThat(BenchPattern.firstMismatch(whole.asSlice(5, 4000), 42, 5)).isEqualTo(-1);
            assertThat(BenchPattern.firstMismatch(whole, 43, 0)).isZero();

            whole.set(ValueLayout.JAVA_BYTE, 2050, (byte)~whole.get(ValueLayout.JAVA_BYTE, 2050));
            assertThat(BenchPattern.firstMismatch(whole, 42, 0)).isEqualTo(2050);
            assertThat(BenchPattern.firstMismatch(whole.asSlice(3), 42, 3)).isEqualTo(2047);
        }
    }

    @Test
    void shouldGiveEachThreadADisjointRangeOfAtMostTheMaximumSpan()
    {
        assertThat(ThroughputBench.spanPerThread(8L << 20, 2, 64 << 10)).isEqualTo(4L << 20);
        assertThat(ThroughputBench.spanPerThread(1L << 30, 2, 1 << 20)).isEqualTo(ThroughputBench.MAX_SPAN);
        assertThat(ThroughputBench.spanPerThread(3L << 20, 2, 1 << 20)).isEqualTo(1L << 20);
        assertThat(ThroughputBench.spanPerThread(1L << 20, 2, 1 << 20)).isZero();
        assertThat(KvWorkload.localBytes(1024)).isEqualTo(1024L * 57_344);
        assertThat(KvWorkload.localBytes(1000)).isEqualTo(1008L * 57_344);
    }
}
