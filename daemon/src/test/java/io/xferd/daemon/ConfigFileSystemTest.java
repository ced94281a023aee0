package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.verbs.Verbs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd daemon --config FILE} as its own process: a tcp configuration serves, {@code protocol: rdma} on a
 * host that cannot serve it exits 2 naming the reason (and claims nothing), a bad file exits 2 naming the field.
 */
@Tag("integration")
@Timeout(120)
class ConfigFileSystemTest
{
    @TempDir
    Path configDir;

    private Path directory;
    private ChildProcess daemon;

    @BeforeEach
    void createDirectory()
    {
        directory = SystemTests.newDaemonDirectory();
    }

    @AfterEach
    void stop()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    private ChildProcess startDaemon(final String json) throws IOException
    {
        final Path config = Files.writeString(configDir.resolve("mooncake.json"), json);
        daemon = ChildProcess.start("daemon", XferdMain.class, "daemon", "--dir", directory.toString(),
            "--config", config.toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0");
        return daemon;
    }

    @Test
    void shouldServeWithATcpMooncakeJson() throws IOException
    {
        startDaemon("""
            {"local_hostname": "10.0.0.5", "metadata_server": "P2PHANDSHAKE", "protocol": "tcp", "device_name": "",
             "transfer_workers": 2}
            """);

        daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        daemon.terminate();
        assertThat(daemon.awaitExit(WAIT)).isZero();
    }

    @Test
    void shouldRefuseRdmaItCannotServeAndExit2() throws IOException
    {
        final Availability here = Verbs.availability();
        org.junit.jupiter.api.Assumptions.assumeFalse(here.isAvailable(), "this host has RDMA devices");
        startDaemon("""
            {"local_hostname": "10.0.0.5", "metadata_server": "P2PHANDSHAKE", "protocol": "rdma",
             "device_name": "mlx5_0,mlx5_1"}
            """);

        assertThat(daemon.awaitExit(WAIT)).isEqualTo(2);
        assertThat(daemon.output()).contains("xferd: protocol rdma requested but RDMA is not available: " +
            here.reason() + " (set protocol to tcp, or protocol_fallback to tcp to serve TCP when RDMA cannot be " +
            "used; xferd never falls back silently)");
        assertThat(filesIn(directory)).isZero();
    }

    @Test
    void shouldExit2NamingTheUnknownFieldAndTheFile() throws IOException
    {
        startDaemon("{\"protocol\": \"tcp\", \"slice_sise\": \"1MiB\"}");

        assertThat(daemon.awaitExit(WAIT)).isEqualTo(2);
        assertThat(daemon.output()).contains("xferd: " + configDir.resolve("mooncake.json") +
            ": line 1, column 21: unknown field 'slice_sise' (did you mean 'slice_size'?)");
        assertThat(filesIn(directory)).isZero();
    }

    private static long filesIn(final Path directory) throws IOException
    {
        try (Stream<Path> files = Files.list(directory))
        {
            return files.count();
        }
    }
}
