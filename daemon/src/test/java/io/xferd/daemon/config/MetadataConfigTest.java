package io.xferd.daemon.config;

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

    @Test
    void shouldTakeCredentialsAndTlsFilesForEtcdAndRedisWithoutPrintingThePassword() throws IOException
    {
        final Path password = Files.writeString(dir.resolve("redis.password"), "s3cret\n");
        final DaemonContext context = apply("""
            {"metadata_server": "redis://10.0.0.5:6379", "metadata_username": "xferd",
             "metadata_password_file": "%s", "metadata_tls_ca_file": "/etc/xferd/ca.pem",
             "metadata_tls_cert_file": "/etc/xferd/client.pem", "metadata_tls_key_file": "/etc/xferd/client.key"}
            """.formatted(password));

        final MetadataAccess access = context.metadataAccess();
        assertThat(access.username()).isEqualTo("xferd");
        assertThat(access.password()).isEqualTo("s3cret");
        assertThat(access.tls()).isTrue();
        assertThat(access.tlsCaFile()).isEqualTo(Path.of("/etc/xferd/ca.pem"));
        assertThat(access.tlsCertFile()).isEqualTo(Path.of("/etc/xferd/client.pem"));
        assertThat(access.tlsKeyFile()).isEqualTo(Path.of("/etc/xferd/client.key"));
        assertThat(context.describe()).containsEntry("metadata_username", "xferd")
            .containsEntry("metadata_password_file", password.toString());
        assertThat(context.describe().toString()).doesNotContain("s3cret");
    }

    @Test
    void shouldHaveNoCredentialsAndNoTlsByDefault()
    {
        final MetadataAccess access = new DaemonContext().conclude().metadataAccess();

        assertThat(access.isNone()).isTrue();
        assertThat(access.tls()).isFalse();
        assertThat(access.password()).isNull();
    }

    @Test
    void shouldRefuseAClientCertificateWithoutItsKeyOrWithoutACa()
    {
        assertThatThrownBy(() -> apply("""
            {"metadata_tls_ca_file": "/ca.pem", "metadata_tls_cert_file": "/client.pem"}
            """)).hasMessageContaining("needs metadata_tls_key_file");
        assertThatThrownBy(() -> apply("""
            {"metadata_tls_cert_file": "/client.pem", "metadata_tls_key_file": "/client.key"}
            """)).hasMessageContaining("needs metadata_tls_ca_file");
        assertThatThrownBy(() -> MetadataAccess.NONE.tlsCertFile(Path.of("/c.pem")).validate())
            .hasMessageContaining("metadata_tls_cert_file and metadata_tls_key_file go together");
    }

    @Test
    void shouldRefuseAnEmptyOrUnreadablePasswordFile() throws IOException
    {
        final Path empty = Files.writeString(dir.resolve("empty.password"), "\n");

        assertThatThrownBy(() -> MetadataAccess.NONE.passwordFile(empty).password())
            .hasMessageContaining("is empty");
        assertThatThrownBy(() -> MetadataAccess.NONE.passwordFile(dir.resolve("missing")).password())
            .hasMessageContaining("cannot read metadata_password_file");
    }

    @Test
    void shouldRefuseCredentialsForAnHttpStoreAndAnEtcdUserWithoutPassword()
    {
        final MetadataAccess user = MetadataAccess.NONE.username("xferd");

        assertThatThrownBy(() -> io.xferd.daemon.metadata.MetadataStores.open(
            MetadataServer.parse("http://127.0.0.1:1/metadata"), 10_000, 1_000, null, user))
            .hasMessageContaining("an http metadata store takes metadata_token_file");
        assertThatThrownBy(() -> io.xferd.daemon.metadata.MetadataStores.open(
            MetadataServer.parse("etcd://127.0.0.1:1"), 10_000, 1_000, null, user))
            .hasMessageContaining("metadata_username and metadata_password_file go together");
    }
}
