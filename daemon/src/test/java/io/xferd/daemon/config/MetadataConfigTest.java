package io.xferd.daemon.config;

import io.xferd.daemon.DaemonContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The metadata store's settings in a config file: the seeds' mooncake.json forms, the cluster id and the TTL.
 */
@Timeout(10)
class MetadataConfigTest
{
    @TempDir
    Path dir;

    private DaemonContext apply(final String json) throws IOException
    {
        return ConfigFile.apply(Files.writeString(dir.resolve("xferd.json"), json), new DaemonContext()).conclude();
    }

    @Test
    void shouldTakeTheStoreTheClusterIdAndTheTtl() throws IOException
    {
        final DaemonContext context = apply("""
            {"metadata_server": "10.0.0.5:6379", "metadata_backend": "redis", "cluster_id": "prod-a",
             "metadata_ttl_ms": 5000}
            """);

        assertThat(context.metadataServer()).isEqualTo("redis://10.0.0.5:6379");
        assertThat(context.clusterId()).isEqualTo("prod-a");
        assertThat(context.metadataTtlMs()).isEqualTo(5000);
        assertThat(context.describe()).containsEntry("cluster_id", "prod-a").containsEntry("metadata_ttl_ms", 5000L);
    }

    @Test
    void shouldDefaultToTheDefaultClusterAndATenSecondTtl()
    {
        final DaemonContext context = new DaemonContext().conclude();

        assertThat(context.clusterId()).isEqualTo("default");
        assertThat(context.metadataTtlMs()).isEqualTo(10_000);
    }

    @Test
    void shouldRefuseAClusterIdThatWouldBreakTheKeysAndATtlTooShortToRenew()
    {
        assertThatThrownBy(() -> apply("{\"cluster_id\": \"a/b\"}"))
            .hasMessageContaining("cluster id must be 1..64 of A-Z a-z 0-9 . _ -: a/b");
        assertThatThrownBy(() -> apply("{\"metadata_ttl_ms\": 100}"))
            .hasMessageContaining("metadata TTL must be at least 1000 ms: 100");
    }
}
