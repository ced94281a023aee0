package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A daemon started with umask 000 still creates its files with the modes the local trust model names: the
 * directory 0750, the socket 0660, cnc.dat, registry.dat and the lock 0640, the journal directory 0750.
 */
@Tag("integration")
@Timeout(120)
class FileModesSystemTest
{
    private final Path directory = SystemTests.newDaemonDirectory();
    private ChildProcess daemon;

    @AfterEach
    void stop()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldSetEveryModeWhateverTheUmask() throws IOException
    {
        Files.setAttribute(directory, "unix:mode", 0777);
        daemon = ChildProcess.startWithUmask("daemon", "000", XferdMain.class, "daemon", "--dir",
            directory.toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "off");
        daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);

        assertThat(mode(directory)).isEqualTo("750");
        assertThat(mode(directory.resolve("xferd.sock"))).isEqualTo("660");
        assertThat(mode(directory.resolve("cnc.dat"))).isEqualTo("640");
        assertThat(mode(directory.resolve("registry.dat"))).isEqualTo("640");
        assertThat(mode(directory.resolve("xferd.lock"))).isEqualTo("640");
        assertThat(mode(directory.resolve("journal"))).isEqualTo("750");
    }

    private static String mode(final Path file) throws IOException
    {
        return Integer.toOctalString((Integer)Files.getAttribute(file, "unix:mode") & 07777);
    }
}
