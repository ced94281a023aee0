package io.xferd.daemon.transport.rdma;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gid_index: auto} picks the routable RoCE v2 GID from a port's sysfs GID table.
 */
@Timeout(10)
class GidIndexSelectorTest
{
    @TempDir
    Path sysfs;

    @Test
    void shouldPickTheFirstRoceV2GidWithAnIpv4MappedAddress() throws IOException
    {
        gid(0, "IB/RoCE v1", "fe80:0000:0000:0000:0202:c9ff:fe12:3456");
        gid(1, "RoCE v2", "fe80:0000:0000:0000:0202:c9ff:fe12:3456");
        gid(2, "IB/RoCE v1", "0000:0000:0000:0000:0000:ffff:0a00:0001");
        gid(3, "RoCE v2", "0000:0000:0000:0000:0000:ffff:0a00:0001");

        assertThat(GidIndexSelector.select(sysfs, "mlx5_0", 1, 4, true)).isEqualTo(3);
    }

    @Test
    void shouldFallBackToTheFirstRoceV2GidThenToZero() throws IOException
    {
        gid(0, "IB/RoCE v1", "fe80:0000:0000:0000:0202:c9ff:fe12:3456");
        gid(1, "RoCE v2", "fe80:0000:0000:0000:0202:c9ff:fe12:3456");

        assertThat(GidIndexSelector.select(sysfs, "mlx5_0", 1, 4, true)).isEqualTo(1);
        assertThat(GidIndexSelector.select(sysfs, "rxe0", 1, 4, true)).isZero();
    }

    @Test
    void shouldUseIndexZeroOnInfiniband()
    {
        assertThat(GidIndexSelector.select(sysfs, "mlx5_0", 1, 128, false)).isZero();
    }

    private void gid(final int index, final String type, final String gid) throws IOException
    {
        final Path port = sysfs.resolve("mlx5_0/ports/1");
        Files.createDirectories(port.resolve("gid_attrs/types"));
        Files.createDirectories(port.resolve("gids"));
        Files.writeString(port.resolve("gid_attrs/types/" + index), type + "\n");
        Files.writeString(port.resolve("gids/" + index), gid + "\n");
    }
}
