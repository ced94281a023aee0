package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.SegmentDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which NICs a slice may take: the local NICs the topology matrix (discovered, or the operator's file) prefers
 * for the source memory, and the peer's NICs its published matrix prefers for the target memory.
 */
@Timeout(30)
class PathPreferenceTest
{
    @Test
    void shouldTakeTheStripingNicsAndPreferencesFromAnOperatorsMatrixFile(@TempDir final Path dir) throws Exception
    {
        final Path matrix = Files.writeString(dir.resolve("matrix.json"), "{\"cpu:0\": [[\"lo\"], []]}");

        final LocalNics nics = LocalNics.resolve(List.of(), matrix);

        assertThat(nics.nics()).extracting(LocalNics.Nic::name).containsExactly("lo");
        assertThat(nics.nics().get(0).address()).isEqualTo("127.0.0.1");
        assertThat(nics.preferred("cpu:0")).containsExactly("lo");
        assertThat(nics.matrixJson()).containsEntry("cpu:0", List.of(List.of("lo"), List.of()));
    }

    @Test
    void shouldRefuseAMatrixFileNamingANicThisHostLacks(@TempDir final Path dir) throws Exception
    {
        final Path matrix = Files.writeString(dir.resolve("matrix.json"), "{\"cpu:0\": [[\"mlx5_9\"], []]}");

        assertThatThrownBy(() -> LocalNics.resolve(List.of(), matrix))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("mlx5_9");
    }

    @Test
    void shouldRefuseAnUnreadableMatrixFileNamingIt(@TempDir final Path dir)
    {
        final Path missing = dir.resolve("nope.json");

        assertThatThrownBy(() -> LocalNics.resolve(List.of("lo"), missing))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("nope.json");
    }

    @Test
    void shouldFindThePeersPreferredNicsForTheTargetMemorysLocation()
    {
        final SegmentDescriptor descriptor = new SegmentDescriptor(SegmentDescriptor.VERSION, "10.0.0.2:12001/decode",
            "tcp", "10.0.0.2:12001", 7, 1, List.of(), List.of(),
            List.of(new SegmentDescriptor.Buffer(0x1000, 4096, "cpu:0"),
                new SegmentDescriptor.Buffer(0x10000, 4096, "cuda:1")),
            Map.of("cpu:0", List.of(List.of("eth0"), List.of("eth1")),
                "cuda:1", List.of(List.of("eth1"), List.of("eth0"))));
        final RemoteSegment segment = new RemoteSegment("10.0.0.2:12001/decode", null, 1, 7, descriptor);

        assertThat(segment.preferredNicsFor(0x1000)).containsExactly("eth0");
        assertThat(segment.preferredNicsFor(0x1FFF)).containsExactly("eth0");
        assertThat(segment.preferredNicsFor(0x10800)).containsExactly("eth1");
        assertThat(segment.preferredNicsFor(0x2000)).isNull();
        assertThat(new RemoteSegment("x", null, 1, 7, null).preferredNicsFor(0x1000)).isNull();
    }

    @Test
    void shouldCarryThePreferencesThroughTheDescriptorJson()
    {
        final SegmentDescriptor descriptor = new SegmentDescriptor(SegmentDescriptor.VERSION, "h:1/s", "tcp", "h:1",
            3, 9, List.of("eth0"), List.of(new SegmentDescriptor.Nic("eth0", "10.0.0.2")),
            List.of(new SegmentDescriptor.Buffer(4096, 8192, "cpu:0")), Map.of("cpu:0", List.of(List.of("eth0"),
            List.of())));

        final SegmentDescriptor read = SegmentDescriptor.fromJson(descriptor.toJson());

        assertThat(read).isEqualTo(descriptor);
        assertThat(descriptor.toJson()).contains("\"priority_matrix\"", "\"nics\"", "\"buffers\"", "\"epoch\":3");
    }
}
