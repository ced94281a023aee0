package io.xferd.topology;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rules that turn a {@link HostTopology} into a {@link TopologyMatrix}; rows in the order
 * {@code cpu:N} by node, then GPUs ({@code cuda:N}, then {@code hip:N}). NICs keep discovery order within
 * a row.
 * <ul>
 *   <li>{@code cpu:N}: preferred = the NICs attached to node N, or every NIC when none is; available = the rest.</li>
 *   <li>GPU: among the NICs on the GPU's NUMA node (every NIC when none is there), preferred = those at the
 *   smallest PCIe distance from the GPU (see {@link PciePath#distanceTo}); when no candidate is on PCIe at
 *   all (virtual NICs), every candidate. Available = the rest.</li>
 * </ul>
 */
final class TopologyMatrixBuilder
{
    private TopologyMatrixBuilder()
    {
    }

    static TopologyMatrix build(final HostTopology host)
    {
        final Map<String, MatrixRow> rows = new LinkedHashMap<>();
        for (final NumaNode node : host.numaNodes())
        {
            rows.put(node.location(), cpuRow(host.nics(), node.id()));
        }
        for (final GpuInfo gpu : host.gpus())
        {
            rows.put(gpu.location(), gpuRow(host.nics(), gpu));
        }
        return new TopologyMatrix(rows);
    }

    private static MatrixRow cpuRow(final List<NicInfo> nics, final int node)
    {
        final List<NicInfo> local = onNode(nics, node);
        return rowOf(nics, local.isEmpty() ? nics : local);
    }

    private static MatrixRow gpuRow(final List<NicInfo> nics, final GpuInfo gpu)
    {
        final List<NicInfo> local = onNode(nics, gpu.numaNode());
        final List<NicInfo> candidates = local.isEmpty() ? nics : local;
        int best = PciePath.UNREACHABLE;
        for (final NicInfo nic : candidates)
        {
            best = Math.min(best, gpu.pciePath().distanceTo(nic.pciePath()));
        }
        final List<NicInfo> closest = new ArrayList<>();
        for (final NicInfo nic : candidates)
        {
            if (gpu.pciePath().distanceTo(nic.pciePath()) == best)
            {
                closest.add(nic);
            }
        }
        return rowOf(nics, closest);
    }

    private static List<NicInfo> onNode(final List<NicInfo> nics, final int node)
    {
        final List<NicInfo> local = new ArrayList<>();
        for (final NicInfo nic : nics)
        {
            if (nic.numaNode() == node)
            {
                local.add(nic);
            }
        }
        return local;
    }

    private static MatrixRow rowOf(final List<NicInfo> all, final List<NicInfo> preferred)
    {
        final List<String> preferredNames = new ArrayList<>();
        final List<String> availableNames = new ArrayList<>();
        for (final NicInfo nic : all)
        {
            (preferred.contains(nic) ? preferredNames : availableNames).add(nic.name());
        }
        return new MatrixRow(preferredNames, availableNames);
    }
}
