package io.xferd.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopologyMatrixTest
{
    private static final String MOONCAKE_JSON =
        "{\"cpu:0\": [[\"mlx5_0\", \"mlx5_1\"], [\"mlx5_2\", \"mlx5_3\"]], " +
        "\"cpu:1\": [[\"mlx5_2\", \"mlx5_3\"], [\"mlx5_0\", \"mlx5_1\"]], " +
        "\"cuda:0\": [[\"mlx5_0\"], [\"mlx5_1\", \"mlx5_2\", \"mlx5_3\"]], " +
        "\"cuda:1\": [[\"mlx5_3\"], [\"mlx5_0\", \"mlx5_1\", \"mlx5_2\"]]}";

    @TempDir
    Path dir;

    @Test
    void shouldReadAndWriteMooncakeJsonExactly()
    {
        final TopologyMatrix matrix = TopologyMatrix.fromJson(MOONCAKE_JSON);

        assertThat(matrix.rows().keySet()).containsExactly("cpu:0", "cpu:1", "cuda:0", "cuda:1");
        assertThat(matrix.preferred("cuda:1")).containsExactly("mlx5_3");
        assertThat(matrix.available("cuda:1")).containsExactly("mlx5_0", "mlx5_1", "mlx5_2");
        assertThat(matrix.toJson()).isEqualTo(MOONCAKE_JSON);
        assertThat(TopologyMatrix.fromJson(matrix.toJson())).isEqualTo(matrix);
    }

    @Test
    void shouldReadCompactAndMultiLineJsonToo()
    {
        final String compact = MOONCAKE_JSON.replace(": ", ":").replace(", ", ",");
        final String pretty = MOONCAKE_JSON.replace("], ", "],\n  ");

        assertThat(TopologyMatrix.fromJson(compact).toJson()).isEqualTo(MOONCAKE_JSON);
        assertThat(TopologyMatrix.fromJson(pretty).toJson()).isEqualTo(MOONCAKE_JSON);
    }

    @Test
    void shouldRoundTripABuiltMatrix(@TempDir final Path root)
    {
        final TopologyMatrix built = TopologyMatrix.build(HostTopology.discover(FakeHosts.dgxH100(root).sysfs()));

        assertThat(TopologyMatrix.fromJson(built.toJson())).isEqualTo(built);
    }

    @Test
    void shouldLoadAMatrixFile() throws Exception
    {
        final Path file = Files.writeString(dir.resolve("topology.json"), MOONCAKE_JSON + "\n");

        assertThat(TopologyMatrix.fromFile(file)).isEqualTo(TopologyMatrix.fromJson(MOONCAKE_JSON));
    }

    @Test
    void shouldRejectWhatIsNotAMatrix()
    {
        assertThatThrownBy(() -> TopologyMatrix.fromJson("not json"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not JSON");
        assertThatThrownBy(() -> TopologyMatrix.fromJson("[]"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("object");
        assertThatThrownBy(() -> TopologyMatrix.fromJson("{}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-empty");
        assertThatThrownBy(() -> TopologyMatrix.fromJson("{\"cpu:0\": [[\"a\"]]}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cpu:0");
        assertThatThrownBy(() -> TopologyMatrix.fromJson("{\"cpu:0\": [[\"a\"], [1]]}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a string");
        assertThatThrownBy(() -> TopologyMatrix.fromJson("{\"cpu:0\": [[\"a\"], [\"a\"]]}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("twice");
        assertThatThrownBy(() -> TopologyMatrix.fromJson("{\"cpu:0\": {\"a\": 1}}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[[preferred...], [available...]]");
    }

    @Test
    void unknownLocationShouldFallBackToCpuZero()
    {
        final TopologyMatrix matrix = TopologyMatrix.fromJson(MOONCAKE_JSON);

        assertThat(matrix.hasLocation("cuda:7")).isFalse();
        assertThat(matrix.row("cuda:7")).isEqualTo(matrix.row("cpu:0"));
        assertThat(matrix.preferred("*")).containsExactly("mlx5_0", "mlx5_1");
        assertThat(matrix.available("cpu:9")).containsExactly("mlx5_2", "mlx5_3");
    }

    @Test
    void withoutCpuZeroAnUnknownLocationShouldPreferEveryNic()
    {
        final TopologyMatrix matrix = TopologyMatrix.fromJson("{\"cuda:0\": [[\"a\"], [\"b\"]], \"cpu:1\": [[\"c\"], []]}");

        assertThat(matrix.preferred("cpu:0")).containsExactly("a", "b", "c");
        assertThat(matrix.available("cpu:0")).isEmpty();
    }

    @Test
    void filterShouldKeepOnlyTheNamedNics()
    {
        final TopologyMatrix filtered = TopologyMatrix.fromJson(MOONCAKE_JSON).filter(Set.of("mlx5_1", "mlx5_3"));

        assertThat(filtered.toJson()).isEqualTo(
            "{\"cpu:0\": [[\"mlx5_1\"], [\"mlx5_3\"]], " +
            "\"cpu:1\": [[\"mlx5_3\"], [\"mlx5_1\"]], " +
            "\"cuda:0\": [[\"mlx5_1\", \"mlx5_3\"], []], " +
            "\"cuda:1\": [[\"mlx5_3\"], [\"mlx5_1\"]]}");
        assertThat(filtered.nics()).containsExactly("mlx5_1", "mlx5_3");
    }

    @Test
    void emptyFilterShouldKeepEveryNic()
    {
        final TopologyMatrix matrix = TopologyMatrix.fromJson(MOONCAKE_JSON);

        assertThat(matrix.filter(Set.of())).isEqualTo(matrix);
    }

    @Test
    void filterShouldNameEveryUnknownNic()
    {
        final TopologyMatrix matrix = TopologyMatrix.fromJson(MOONCAKE_JSON);

        assertThatThrownBy(() -> matrix.filter(Set.of("mlx5_0", "mlx5_9", "eth7")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("[eth7, mlx5_9]")
            .hasMessageContaining("mlx5_0, mlx5_1, mlx5_2, mlx5_3");
    }

    @Test
    void equalityShouldDependOnRowOrder()
    {
        final Map<String, MatrixRow> ab = new LinkedHashMap<>();
        ab.put("cpu:0", new MatrixRow(List.of("a"), List.of()));
        ab.put("cpu:1", new MatrixRow(List.of("a"), List.of()));
        final Map<String, MatrixRow> ba = new LinkedHashMap<>();
        ba.put("cpu:1", ab.get("cpu:1"));
        ba.put("cpu:0", ab.get("cpu:0"));

        assertThat(new TopologyMatrix(ab)).isEqualTo(new TopologyMatrix(new LinkedHashMap<>(ab)));
        assertThat(new TopologyMatrix(ab)).isNotEqualTo(new TopologyMatrix(ba));
    }
}
