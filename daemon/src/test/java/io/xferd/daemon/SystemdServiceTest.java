package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.nativebindings.libc.UnixDatagramSocket;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The systemd side of the daemon: the unit file in packaging/ passes {@code systemd-analyze verify} (with
 * ExecStart pointing at this checkout's launcher, so that verify can check it is executable), and a daemon
 * started with {@code NOTIFY_SOCKET} and {@code WATCHDOG_USEC} speaks the notify protocol to a datagram socket
 * this test owns: READY=1, then WATCHDOG=1 at half the interval, then STOPPING=1 on SIGTERM and exit 0.
 */
@Tag("integration")
class SystemdServiceTest
{
    private static final Path UNIT = Path.of("..", "packaging", "xferd.service").toAbsolutePath().normalize();

    @Test
    @Timeout(60)
    void shouldPassSystemdAnalyzeVerify(@TempDir final Path temp) throws Exception
    {
        final Path analyze = Path.of("/usr/bin/systemd-analyze");
        if (!Files.isExecutable(analyze))
        {
            Assumptions.assumeTrue(System.getenv("CI") != null,
                "systemd-analyze not installed (Debian package: systemd); skipped outside CI");
            throw new AssertionError("CI must install the systemd package for systemd-analyze");
        }
        final String unit = Files.readString(UNIT);
        assertThat(unit).contains("Type=notify", "WatchdogSec=", "Restart=on-failure", "User=xferd", "Group=xferd",
            "LimitMEMLOCK=infinity", "NoNewPrivileges=yes", "ProtectSystem=strict",
            "-Dchronicle.analytics.disable=true", "ExecStart=/opt/xferd/bin/xferd daemon");
        final Path launcher = UNIT.getParent().getParent().resolve("bin/xferd");
        final Path copy = temp.resolve("xferd.service");
        Files.writeString(copy, unit.replace("/opt/xferd/bin/xferd", launcher.toString()));

        final Process verify = new ProcessBuilder(analyze.toString(), "verify", "--man=no", copy.toString())
            .redirectErrorStream(true).start();
        final String output = new String(verify.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(verify.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // verify exits 0 on settings it cannot parse and only says "ignoring": any line about the unit fails
        assertThat(output.lines().filter(line -> line.contains("xferd.service")).toList()).as(output).isEmpty();
        assertThat(verify.exitValue()).as(output).isZero();
    }

    @Test
    @Timeout(90)
    void shouldNotifyReadyThenWatchdogThenStopping() throws IOException
    {
        final Path directory = SystemTests.newDaemonDirectory();
        final Path notifyPath = directory.resolveSibling(directory.getFileName() + "-notify");
        try (UnixDatagramSocket notify = UnixDatagramSocket.bind(notifyPath.toString()))
        {
            notify.configureBlocking(false);
            final long launched = System.nanoTime();
            try (ChildProcess daemon = ChildProcess.start("daemon",
                Map.of("NOTIFY_SOCKET", notifyPath.toString(), "WATCHDOG_USEC", "400000"), XferdMain.class,
                "daemon", "--dir", directory.toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "off",
                "--no-journal"))
            {
                final List<String> messages = new ArrayList<>();
                awaitMessage(notify, messages, "READY=1", daemon);
                assertThat(messages.getFirst()).contains("READY=1").contains("MAINPID=" + daemon.pid());
                // the datagram can overtake the log line on its way through the output reader: wait for the line
                daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);

                awaitMessage(notify, messages, "WATCHDOG=1", daemon);
                awaitMessage(notify, messages, "WATCHDOG=1", daemon);
                awaitMessage(notify, messages, "WATCHDOG=1", daemon);

                daemon.terminate();
                awaitMessage(notify, messages, "STOPPING=1", daemon);
                assertThat(daemon.awaitExit(SystemTests.WAIT)).as(daemon.output()).isZero();
                // pings come at half of the 400 ms interval, not in a storm: however late this test read them,
                // the daemon cannot have sent more than one per 200 ms of its whole life (no clock race here:
                // its life is shorter than the span measured around it)
                final long lifeMs = (System.nanoTime() - launched) / 1_000_000;
                final long pings = messages.stream().filter(message -> message.contains("WATCHDOG=1")).count();
                assertThat(pings).as("pings in %d ms: %s", lifeMs, messages).isBetween(3L, lifeMs / 200 + 1);
            }
        }
        finally
        {
            Files.deleteIfExists(notifyPath);
            SystemTests.deleteRecursively(directory);
        }
    }

    private static void awaitMessage(
        final UnixDatagramSocket socket, final List<String> messages, final String expected, final ChildProcess daemon)
    {
        final long deadline = System.nanoTime() + SystemTests.WAIT.toNanos();
        while (System.nanoTime() < deadline)
        {
            final String message = socket.receiveText(4096);
            if (message == null)
            {
                if (!daemon.isAlive())
                {
                    break;
                }
                sleep(Duration.ofMillis(5));
                continue;
            }
            messages.add(message);
            if (message.contains(expected))
            {
                return;
            }
        }
        throw new AssertionError("no " + expected + " on the notify socket; got " + messages + "; daemon output:\n" +
            daemon.output());
    }

    private static void sleep(final Duration duration)
    {
        try
        {
            Thread.sleep(duration);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }
}
