package io.xferd.topology;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reads NUMA nodes from {@code devices/system/node/nodeN/cpulist}. A host without that directory (a
 * kernel built without NUMA) is one node 0 holding every CPU of {@code devices/system/cpu/online}.
 */
public final class CpuTopologyReader
{
    private static final Pattern NODE_DIR = Pattern.compile("node(\\d+)");

    private final SysfsRoot sysfs;

    public CpuTopologyReader(final SysfsRoot sysfs)
    {
        this.sysfs = sysfs;
    }

    /** @return the NUMA nodes by ascending id, never empty. */
    public List<NumaNode> read()
    {
        final List<NumaNode> nodes = new ArrayList<>();
        for (final String name : sysfs.list("devices/system/node"))
        {
            final var matcher = NODE_DIR.matcher(name);
            if (matcher.matches())
            {
                final String cpulist = sysfs.readText("devices/system/node/" + name + "/cpulist");
                nodes.add(new NumaNode(Integer.parseInt(matcher.group(1)), parseOrEmpty(cpulist)));
            }
        }
        nodes.sort(Comparator.comparingInt(NumaNode::id));
        if (nodes.isEmpty())
        {
            nodes.add(new NumaNode(0, parseOrEmpty(sysfs.readText("devices/system/cpu/online"))));
        }
        return List.copyOf(nodes);
    }

    private static List<Integer> parseOrEmpty(final String cpulist)
    {
        try
        {
            return CpuList.parse(cpulist);
        }
        catch (final IllegalArgumentException ex)
        {
            return List.of();
        }
    }
}
