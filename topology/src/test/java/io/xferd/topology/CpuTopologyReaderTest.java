package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class CpuTopologyReaderTest
{
    @TempDir
    Path root;

    @Test
    void shouldReadEveryNodeInIdOrder()
    {
        final FakeSysfs sysfs = new FakeSysfs(root)
            .numaNode(10, "")
            .numaNode(1, "4-7")
            .numaNode(0, "0-3")
            .numaNode(2, "8-9");

        assertThat(new CpuTopologyReader(sysfs.sysfs()).read()).containsExactly(
            new NumaNode(0, List.of(0, 1, 2, 3)),
            new NumaNode(1, List.of(4, 5, 6, 7)),
            new NumaNode(2, List.of(8, 9)),
            new NumaNode(10, List.of()));
    }

    @Test
    void shouldMakeOneNodeOfAllOnlineCpusWithoutNodeDirectories()
    {
        final FakeSysfs sysfs = new FakeSysfs(root).onlineCpus("0-11");

        assertThat(new CpuTopologyReader(sysfs.sysfs()).read())
            .containsExactly(new NumaNode(0, IntStream.rangeClosed(0, 11).boxed().toList()));
    }

    @Test
    void shouldTolerateAnEmptyTree()
    {
        assertThat(new CpuTopologyReader(SysfsRoot.of(root.resolve("missing"))).read())
            .containsExactly(new NumaNode(0, List.of()));
    }

    @Test
    void shouldTreatAGarbledCpulistAsNoCpus()
    {
        final FakeSysfs sysfs = new FakeSysfs(root).numaNode(0, "0-3").numaNode(1, "garbage");

        assertThat(new CpuTopologyReader(sysfs.sysfs()).read())
            .containsExactly(new NumaNode(0, List.of(0, 1, 2, 3)), new NumaNode(1, List.of()));
    }
}
