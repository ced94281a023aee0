package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CpuListTest
{
    @ParameterizedTest(name = "\"{0}\" -> [{1}]")
    @CsvSource(delimiter = '|', emptyValue = "", value = {
        "0          | 0",
        "0-3        | 0 1 2 3",
        "0-3,8-11   | 0 1 2 3 8 9 10 11",
        "0,2,4      | 0 2 4",
        "4,0-1      | 0 1 4",
        "0-2,1-3    | 0 1 2 3",
        "' 0-1 '    | 0 1",
        "7-7        | 7",
        "0-7:1/2    | 0 2 4 6",
        "0-7:2/4    | 0 1 4 5",
        "''         | ''",
    })
    void shouldParseKernelCpulistSyntax(final String text, final String expected)
    {
        assertThat(CpuList.parse(text)).isEqualTo(ints(expected));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "0-", "-1", "3-1", "0,,1", "1-2-3", "0-7:2", "0-7:0/2", "0-7:4/2"})
    void shouldRejectWhatIsNotACpulist(final String text)
    {
        assertThatThrownBy(() -> CpuList.parse(text))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(text);
    }

    @ParameterizedTest(name = "[{0}] -> \"{1}\"")
    @CsvSource(delimiter = '|', emptyValue = "", value = {
        "0 1 2 3 8 9 10 11 | 0-3,8-11",
        "0 2 4             | 0,2,4",
        "5                 | 5",
        "''                | ''",
    })
    void shouldFormatCompactly(final String cpus, final String expected)
    {
        assertThat(CpuList.format(ints(cpus))).isEqualTo(expected);
    }

    @Test
    void formatThenParseShouldGiveBackAnySetOfCpus()
    {
        final Random random = new Random(42);
        for (int trial = 0; trial < 500; trial++)
        {
            final List<Integer> cpus = new ArrayList<>();
            for (int cpu = 0; cpu < 256; cpu++)
            {
                if (random.nextInt(4) == 0)
                {
                    cpus.add(cpu);
                }
            }
            assertThat(CpuList.parse(CpuList.format(cpus))).isEqualTo(cpus);
        }
    }

    private static List<Integer> ints(final String spaced)
    {
        return spaced.isBlank() ? List.of() :
            Arrays.stream(spaced.trim().split("\\s+")).map(Integer::valueOf).toList();
    }
}
