package io.xferd.topology;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * What {@code xferd topology} shows: a human-readable report (NUMA nodes, NICs, GPUs, then the matrix)
 * or, with {@code --json}, one JSON document
 * {@code {"nics": [...], "gpus": [...], "numa_nodes": [...], "matrix": {...}}} whose {@code matrix} member
 * is in Mooncake's form.
 */
public final class TopologyPrinter
{
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private TopologyPrinter()
    {
    }

    public static void printText(final HostTopology host, final TopologyMatrix matrix, final PrintStream out)
    {
        out.println("NUMA nodes");
        final TextTable nodes = new TextTable("node", "cpus");
        for (final NumaNode node : host.numaNodes())
        {
            nodes.row(node.id(), node.cpus().isEmpty() ? "(none)" : CpuList.format(node.cpus()));
        }
        nodes.print(out, "  ");

        out.println();
        out.println("NICs");
        final TextTable nics = new TextTable("name", "kind", "netdev", "pci", "numa", "speed", "state", "mac", "addresses");
        for (final NicInfo nic : host.nics())
        {
            nics.row(nic.name(), nic.kind(), nic.netdev(), nic.pciAddress(), nic.numaNode(), speedText(nic),
                nic.state(), nic.mac(), nic.addresses().isEmpty() ? null : String.join(",", nic.addresses()));
        }
        nics.print(out, "  ");

        out.println();
        out.println("GPUs");
        if (host.gpus().isEmpty())
        {
            out.println("  (none)");
        }
        else
        {
            final TextTable gpus = new TextTable("location", "vendor", "pci", "numa", "pcie path");
            for (final GpuInfo gpu : host.gpus())
            {
                gpus.row(gpu.location(), gpu.vendor(), gpu.pciAddress(), gpu.numaNode(), gpu.pciePath());
            }
            gpus.print(out, "  ");
        }

        out.println();
        out.println("Topology matrix");
        final TextTable rows = new TextTable("location", "preferred", "available");
        for (final Map.Entry<String, MatrixRow> entry : matrix.rows().entrySet())
        {
            rows.row(entry.getKey(), names(entry.getValue().preferred()), names(entry.getValue().available()));
        }
        rows.print(out, "  ");
        out.println();
        out.println("  (a location not listed uses the " + TopologyMatrix.FALLBACK_LOCATION + " row)");
    }

    public static void printJson(final HostTopology host, final TopologyMatrix matrix, final PrintStream out)
    {
        out.println(toJson(host, matrix));
    }

    /** @return the JSON document {@link #printJson} prints. */
    public static String toJson(final HostTopology host, final TopologyMatrix matrix)
    {
        final ObjectNode root = MAPPER.createObjectNode();
        final ArrayNode nics = root.putArray("nics");
        for (final NicInfo nic : host.nics())
        {
            final ObjectNode node = nics.addObject();
            node.put("name", nic.name());
            node.put("kind", nic.kind().name());
            node.put("netdev", nic.netdev());
            node.put("pci_address", nic.pciAddress());
            node.put("numa_node", nic.numaNode());
            node.put("speed_mbps", nic.speedMbps());
            node.put("state", nic.state());
            node.put("mac", nic.mac());
            node.put("pcie_path", nic.pciePath().isEmpty() ? null : nic.pciePath().toString());
            final ArrayNode addresses = node.putArray("addresses");
            nic.addresses().forEach(addresses::add);
        }
        final ArrayNode gpus = root.putArray("gpus");
        for (final GpuInfo gpu : host.gpus())
        {
            final ObjectNode node = gpus.addObject();
            node.put("location", gpu.location());
            node.put("vendor", gpu.vendor().name());
            node.put("pci_address", gpu.pciAddress());
            node.put("numa_node", gpu.numaNode());
            node.put("pcie_path", gpu.pciePath().toString());
        }
        final ArrayNode numaNodes = root.putArray("numa_nodes");
        for (final NumaNode numa : host.numaNodes())
        {
            numaNodes.addObject().put("id", numa.id()).put("cpus", CpuList.format(numa.cpus()));
        }
        try
        {
            root.set("matrix", MAPPER.readTree(matrix.toJson()));
            return MAPPER.writeValueAsString(root);
        }
        catch (final JsonProcessingException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static String speedText(final NicInfo nic)
    {
        if (!nic.hasSpeed())
        {
            return null;
        }
        final long mbps = nic.speedMbps();
        return mbps >= 1000 && mbps % 1000 == 0 ? (mbps / 1000) + " Gb/s" : mbps + " Mb/s";
    }

    private static String names(final List<String> names)
    {
        return names.isEmpty() ? "-" : String.join(",", names);
    }
}
