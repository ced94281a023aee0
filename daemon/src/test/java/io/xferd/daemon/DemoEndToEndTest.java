package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.ipc.CncFileDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first run a user makes, {@code xferd demo}, end to end: a daemon, a prefill process and a decode process
 * move a KV cache and the decode side checks every byte.
 */
@Tag("integration")
@Timeout(150)
class DemoEndToEndTest
{
    private Path directory;
    private ChildProcess demo;

    @BeforeEach
    void createDirectory()
    {
        directory = SystemTests.newDaemonDirectory();
    }

    @AfterEach
    void cleanUp()
    {
        if (demo != null)
        {
            demo.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldMoveAKvCacheBetweenTwoProcessesAndVerifyEveryByte()
    {
        demo = ChildProcess.start("demo", XferdMain.class,
            "demo", "--dir", directory.toString(), "--size-mib", "32", "--timeout-s", "100");

        assertThat(demo.awaitExit(Duration.ofSeconds(120))).as(demo.output()).isZero();
        assertThat(demo.output()).contains("every byte verified").contains("VERIFIED");
        assertThat(demo.output()).as("the figure is one timed pass after a warm-up that says how it ended")
            .contains("WARMED UP: ").contains("(one timed pass, after warm-up)");
        assertThat(directory.resolve(CncFileDescriptor.CNC_FILE)).as("the demo's daemon cleaned up").doesNotExist();
        assertThat(directory.resolve(CncFileDescriptor.SOCKET_FILE)).doesNotExist();
    }
}
