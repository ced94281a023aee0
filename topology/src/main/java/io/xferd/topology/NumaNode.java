package io.xferd.topology;

import java.util.List;

/**
 * One NUMA node: its id (the N of {@code nodeN} and of the matrix location {@code cpu:N}) and its CPUs.
 * A memory-only node (CXL, HBM) has no CPUs.
 */
public record NumaNode(int id, List<Integer> cpus)
{
    public NumaNode
    {
        cpus = List.copyOf(cpus);
    }

    /** @return the matrix location of memory on this node, {@code cpu:N}. */
    public String location()
    {
        return "cpu:" + id;
    }
}
