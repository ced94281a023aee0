package io.xferd.daemon.tools.cli;

import org.junit.jupiter.api.Test;

import java.util.Locale;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class StatusCommandTest
{
    @Test
    void groupsThousandsAsPrintfDoesInTheEnglishLocale()
    {
        final Random random = new Random(Long.getLong("xferd.test.seed", 11));
        final long[] edges = {0, 1, -1, 999, 1_000, -1_000, 999_999, 1_000_000, Long.MAX_VALUE, Long.MIN_VALUE};
        for (final long value : edges)
        {
            assertThat(StatusCommand.grouped(value)).isEqualTo(String.format(Locale.US, "%,d", value));
        }
        for (int i = 0; i < 10_000; i++)
        {
            final long value = random.nextLong() >> random.nextInt(64);
            assertThat(StatusCommand.grouped(value)).as("%d", value)
                .isEqualTo(String.format(Locale.US, "%,d", value));
        }
    }
}
