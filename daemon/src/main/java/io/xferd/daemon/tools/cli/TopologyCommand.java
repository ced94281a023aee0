package io.xferd.daemon.tools.cli;

import io.xferd.daemon.host.GpuOrdinals;
import io.xferd.topology.HostTopology;
import io.xferd.topology.SysfsRoot;
import io.xferd.topology.TopologyMatrix;
import io.xferd.topology.TopologyPrinter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * {@code xferd topology}: what this host has (NUMA nodes, NICs, GPUs) and the NIC preference matrix.
 */
@Command(name = "topology", mixinStandardHelpOptions = true,
    description = "Print NUMA nodes, NICs, GPUs and the topology matrix (Mooncake's JSON form with --json).")
public final class TopologyCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Option(names = "--sysfs", description = "sysfs root (default: ${DEFAULT-VALUE}).")
    Path sysfs = Path.of("/sys");

    @Override
    public Integer call()
    {
        final HostTopology discovered = HostTopology.discover(SysfsRoot.of(sysfs));
        // the live host's GPUs as CUDA numbers them; a fake sysfs tree keeps its PCI order
        final HostTopology topology = SysfsRoot.of(sysfs).isLive() ?
            GpuOrdinals.apply(discovered, GpuOrdinals.RUNTIME) : discovered;
        final TopologyMatrix matrix = TopologyMatrix.build(topology);
        if (json)
        {
            TopologyPrinter.printJson(topology, matrix, System.out);
        }
        else
        {
            TopologyPrinter.printText(topology, matrix, System.out);
        }
        return 0;
    }
}
