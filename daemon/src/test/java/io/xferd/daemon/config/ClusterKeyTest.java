package io.xferd.daemon.config;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClusterKeyTest
{
    private final Path dir = createDirectory();

    private static Path createDirectory()
    {
        try
        {
            return Files.createTempDirectory("xferd-cluster-key");
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @AfterEach
    void delete() throws IOException
    {
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Test
    void shouldCreateA256BitTokenFileOwnerOnlyOnceAndReadItAfterwards() throws IOException
    {
        final DaemonContext first = new DaemonContext().directory(dir);
        ClusterKey.resolve(first);
        final Path file = dir.resolve("cluster.token");
        assertThat(first.clusterToken()).matches("[0-9a-f]{64}");
        assertThat(Files.readString(file)).isEqualTo(first.clusterToken() + "\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");

        final DaemonContext second = new DaemonContext().directory(dir);
        ClusterKey.resolve(second);
        assertThat(second.clusterToken()).isEqualTo(first.clusterToken());
        assertThat(second.describe()).containsEntry("cluster_token", "file " + file);
    }

    @Test
    void shouldUseAConfiguredFileCreatingItWhenAbsent() throws IOException
    {
        final Path file = dir.resolve("shared.token");
        final DaemonContext context = new DaemonContext().directory(dir).clusterTokenFile(file);
        ClusterKey.resolve(context);
        assertThat(Files.readString(file).trim()).isEqualTo(context.clusterToken());
        assertThat(Files.exists(dir.resolve("cluster.token"))).isFalse();
    }

    @Test
    void shouldRefuseATokenShorterThan128BitsAndAnEmptyFile() throws IOException
    {
        Files.writeString(dir.resolve("short.token"), "0123456789abcdef0123456789abcde\n");
        assertThatThrownBy(() -> ClusterKey.resolve(new DaemonContext().directory(dir)
            .clusterTokenFile(dir.resolve("short.token"))))
            .hasMessageContaining("is 31 characters long")
            .hasMessageContaining("at least 32");
        Files.writeString(dir.resolve("empty.token"), " \n");
        assertThatThrownBy(() -> ClusterKey.resolve(new DaemonContext().directory(dir)
            .clusterTokenFile(dir.resolve("empty.token"))))
            .hasMessageContaining("is empty");
        assertThatThrownBy(() -> new DaemonContext().clusterToken("sesame").conclude())
            .hasMessageContaining("is 6 characters long");
    }

    @Test
    void shouldResolveNothingWhenPeerAuthenticationIsOff()
    {
        final DaemonContext context = new DaemonContext().directory(dir).peerAuthentication(false);
        ClusterKey.resolve(context);
        assertThat(context.clusterToken()).isNull();
        assertThat(Files.exists(dir.resolve("cluster.token"))).isFalse();
        assertThat((String)context.describe().get("cluster_token")).contains("OFF");
    }
}
