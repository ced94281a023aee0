package io.xferd.topology;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class TopologyPrinterTest
{
    @TempDir
    Path root;

    @Test
    void textShouldShowNodesNicsGpusAndTheMatrix()
    {
        final HostTopology host = HostTopology.discover(FakeHosts.dgxH100(root).sysfs());
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        TopologyPrinter.printText(host, TopologyMatrix.build(host), new PrintStream(bytes, true, StandardCharsets.UTF_8));

        final String text = bytes.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("NUMA nodes", "NICs", "GPUs", "Topology matrix");
        assertThat(text).containsPattern("(?m)^  0\\s+0-55,112-167$");
        assertThat(text).containsPattern("(?m)^  mlx5_2\\s+RDMA\\s+ibp2\\s+0000:\\S+\\s+0\\s+400 Gb/s\\s+active\\s");
        assertThat(text).containsPattern("(?m)^  cuda:3\\s+NVIDIA\\s+0000:\\S+\\s+0\\s+pci0000:");
        assertThat(text).containsPattern("(?m)^  cuda:3\\s+mlx5_2\\s+mlx5_0,mlx5_1,mlx5_3,");
    }

    @Test
    void textShouldSayWhenThereIsNoGpu()
    {
        final HostTopology host = HostTopology.discover(FakeHosts.laptop(root).sysfs());
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        TopologyPrinter.printText(host, TopologyMatrix.build(host), new PrintStream(bytes, true, StandardCharsets.UTF_8));

        assertThat(bytes.toString(StandardCharsets.UTF_8))
            .contains("GPUs\n  (none)")
            .containsPattern("(?m)^  enp0s31f6\\s+ETHERNET\\s+enp0s31f6\\s+0000:00:1f.6\\s+0\\s+1 Gb/s\\s+up\\s");
    }

    @Test
    void jsonShouldHoldNicsGpusNodesAndTheMooncakeMatrix() throws Exception
    {
        final HostTopology host = HostTopology.discover(FakeHosts.twoSocketServer(root).sysfs());
        final TopologyMatrix matrix = TopologyMatrix.build(host);
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        TopologyPrinter.printJson(host, matrix, new PrintStream(bytes, true, StandardCharsets.UTF_8));

        final JsonNode json = new ObjectMapper().readTree(bytes.toString(StandardCharsets.UTF_8));
        assertThat(json.properties()).extracting(java.util.Map.Entry::getKey)
            .containsExactly("nics", "gpus", "numa_nodes", "matrix");
        assertThat(json.get("nics")).hasSize(4);
        assertThat(json.get("nics").get(2).get("name").asText()).isEqualTo("ens2f0");
        assertThat(json.get("nics").get(2).get("numa_node").asInt()).isEqualTo(1);
        assertThat(json.get("nics").get(2).get("pci_address").asText()).isEqualTo("0000:98:00.0");
        assertThat(json.get("nics").get(2).get("speed_mbps").asLong()).isEqualTo(100000);
        assertThat(json.get("gpus")).isEmpty();
        assertThat(json.get("numa_nodes").get(1).get("cpus").asText()).isEqualTo("16-31,48-63");
        assertThat(TopologyMatrix.fromJson(json.get("matrix").toString())).isEqualTo(matrix);
    }
}
