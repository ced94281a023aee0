package io.xferd.daemon;

import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.tools.status.StatusSnapshot;
import io.xferd.nativebindings.verbs.Verbs;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A real daemon asked for {@code protocol: rdma} on a host without RDMA devices: it refuses to start and leaves
 * nothing behind, unless {@code protocol_fallback: tcp} is set, and then it serves TCP and says so in status.
 */
@Tag("integration")
@Timeout(30)
class RdmaSelectionSystemTest
{
    @TempDir
    Path directory;

    @Test
    void shouldRefuseToStartWithoutRdmaDevicesAndClaimNothing()
    {
        Assumptions.assumeFalse(Verbs.availability().isAvailable(), "this host has RDMA devices");

        assertThatThrownBy(() -> XferDaemon.launch(SystemTests.daemonContext(directory).protocol("rdma")))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("protocol rdma requested but RDMA is not available")
            .hasMessageContaining("protocol_fallback to tcp");
        assertThat(directory.resolve("cnc.dat")).doesNotExist();
    }

    @Test
    void shouldServeTcpAndShowItInStatusWhenTheFallbackIsNamed() throws Exception
    {
        Assumptions.assumeFalse(Verbs.availability().isAvailable(), "this host has RDMA devices");

        try (XferDaemon daemon = XferDaemon.launch(SystemTests.daemonContext(directory).protocol("rdma")
            .protocolFallback("tcp").deviceNames(java.util.List.of("mlx5_0"))))
        {
            assertThat(daemon.transport().name()).isEqualTo("tcp");
            assertThat(daemon.context().transportInUse())
                .startsWith("tcp (protocol_fallback, because RDMA is not available: ");
            Map<String, Object> status = StatusSnapshot.read(directory);
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (status.get("config") == null && System.nanoTime() < deadline)
            {
                Thread.sleep(50); // the status reader may catch the registry while it is being written
                status = StatusSnapshot.read(directory);
            }
            assertThat(String.valueOf(status.get("config"))).as("status %s", status).contains("transport").contains("tcp (protocol_fallback, because");
        }
        assertThat(Files.exists(directory.resolve("cnc.dat"))).isFalse();
    }
}
