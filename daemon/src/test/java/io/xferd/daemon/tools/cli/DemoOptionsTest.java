package io.xferd.daemon.tools.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd demo}'s options are checked before anything starts: a bad one exits 2 with no daemon, producer or
 * consumer started, whatever its size (no overflow into a negative budget), and a warm-up budget that leaves decode
 * no time for the timed pass (decode gives up --timeout-s after it is ready) is refused.
 */
@Timeout(60)
class DemoOptionsTest
{
    @TempDir
    Path dir;

    @Test
    void shouldRefuseAWarmUpBudgetAsLongAsTheTimeout() throws IOException
    {
        assertRefused("--warm-up-s", "5", "--timeout-s", "5", "--size-mib", "1");
        assertThat(invalid("--warm-up-s", "5", "--timeout-s", "5")).contains("--warm-up-s").contains("--timeout-s");
        assertThat(invalid("--warm-up-s", "4", "--timeout-s", "5")).isNull();
    }

    @Test
    void shouldRefuseAWarmUpBudgetThatWouldOverflowToNegative() throws IOException
    {
        // 10^10 s is 10^13 ms, 10^19 ns: past Long.MAX_VALUE (9.2 x 10^18) once in nanoseconds
        assertRefused("--warm-up-s", "10000000000", "--timeout-s", "5", "--size-mib", "1");
        assertRefused("--warm-up-s", Long.toString(Long.MAX_VALUE), "--timeout-s", Long.toString(Long.MAX_VALUE));
    }

    @Test
    void shouldRefuseOutOfRangeTimeoutsSizesAndCounts() throws IOException
    {
        assertRefused("--timeout-s", "0", "--warm-up-s", "0");
        assertRefused("--timeout-s", Long.toString(DemoCommand.MAX_TIMEOUT_SECONDS + 1));
        assertRefused("--timeout-s", Long.toString(Long.MAX_VALUE / 1000 + 1), "--warm-up-s", "0");
        assertRefused("--size-mib", "0");
        assertRefused("--size-mib", Long.toString(Long.MAX_VALUE / 1024));
        assertRefused("--warm-up-s", "-1");
        assertRefused("--passes", "0");
        assertRefused("--batch", "0");
        assertRefused("--disagg", "--timeout-s", "0");
    }

    @Test
    void shouldAcceptTheDefaultsAndTheLimits()
    {
        assertThat(invalid()).isNull();
        assertThat(invalid("--size-mib", Long.toString(DemoCommand.MAX_SIZE_MIB),
            "--timeout-s", Long.toString(DemoCommand.MAX_TIMEOUT_SECONDS),
            "--warm-up-s", Long.toString(DemoCommand.MAX_TIMEOUT_SECONDS - 1))).isNull();
        assertThat(invalid("--passes", "1", "--warm-up-s", "0", "--timeout-s", "1")).isNull();
    }

    @Test
    void shouldRefuseADirThatIsARegularFileAndKeepIt() throws IOException
    {
        final Path file = Files.writeString(dir.resolve("notes.txt"), "the user's");

        assertThat(execute("demo", "--dir", file.toString(), "--size-mib", "1", "--passes", "1", "--warm-up-s", "0",
            "--timeout-s", "20")).isEqualTo(2);
        assertThat(file).hasContent("the user's");
    }

    @Test
    void shouldRefuseADirThatIsALinkToADirectoryAndKeepBoth() throws IOException
    {
        final Path target = Files.createDirectories(dir.resolve("target"));
        Files.writeString(target.resolve("notes.txt"), "the user's");
        final Path link = Files.createSymbolicLink(dir.resolve("link"), target);

        assertThat(execute("demo", "--dir", link.toString(), "--size-mib", "1", "--passes", "1", "--warm-up-s", "0",
            "--timeout-s", "20")).isEqualTo(2);
        assertThat(Files.isSymbolicLink(link)).isTrue();
        try (Stream<Path> entries = Files.list(target))
        {
            assertThat(entries).containsExactly(target.resolve("notes.txt"));
        }
        assertThat(target.resolve("notes.txt")).hasContent("the user's");
    }

    @Test
    void shouldRemoveNothingWhenItsDaemonNeverStarted() throws IOException
    {
        // the daemon claims the directory, then refuses the short token and gives the directory up again
        final Path directory = Files.createDirectories(dir.resolve("xferd"));
        Files.writeString(directory.resolve("cluster.token"), "too short");

        assertThat(execute("demo", "--dir", directory.toString(), "--size-mib", "1", "--passes", "1",
            "--warm-up-s", "0", "--timeout-s", "20")).isNotZero();
        assertThat(directory.resolve("xferd.lock")).as("absent before the run, made by the launch that failed: " +
            "removed only after a daemon of the demo's started").exists();
        assertThat(directory.resolve("cluster.token")).hasContent("too short");
    }

    private static int execute(final String... argv)
    {
        return XferdMain.commandLine(argv).execute(argv);
    }

    /** Runs {@code xferd demo} in a fresh directory: exit 2, and nothing was started there. */
    private void assertRefused(final String... options) throws IOException
    {
        final List<String> args = new ArrayList<>(List.of("demo", "--dir", dir.toString()));
        args.addAll(List.of(options));
        final String[] argv = args.toArray(String[]::new);

        assertThat(XferdMain.commandLine(argv).execute(argv)).as(args.toString()).isEqualTo(2);
        try (Stream<Path> files = Files.list(dir))
        {
            assertThat(files).as("no daemon started for " + args).isEmpty();
        }
    }

    private static String invalid(final String... options)
    {
        final List<String> args = new ArrayList<>(List.of("demo"));
        args.addAll(List.of(options));
        final String[] argv = args.toArray(String[]::new);
        final picocli.CommandLine commandLine = XferdMain.commandLine(argv);
        commandLine.parseArgs(argv);
        return commandLine.getSubcommands().get("demo").<DemoCommand>getCommand().invalidOptions();
    }
}
