package io.xferd.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.journal.JournalEntry;
import io.xferd.daemon.journal.JournalReader;
import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.ipc.SystemCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A journal on a file system that fills up (a small tmpfs the test mounts, like a full {@code /dev/shm}): its
 * writes fail, are counted, shown by {@code xferd status} and the metrics; every transfer of an honest client in
 * another process keeps completing, verified; once space returns the journal writes again by itself, and its
 * thread is alive throughout.
 */
@Tag("integration")
@Timeout(300)
class JournalFullFileSystemTest
{
    private static final int MAX_ROUNDS = 2_000;

    private Path directory;
    private Path mountPoint;
    private boolean mounted;
    private XferDaemon daemon;
    private ChildProcess honest;
    private long rounds;

    @AfterEach
    void cleanUp() throws Exception
    {
        if (honest != null)
        {
            honest.sendLine("EXIT");
            honest.close();
        }
        if (daemon != null)
        {
            daemon.close();
        }
        if (mounted)
        {
            try
            {
                UnixUsers.run(List.of("umount", mountPoint.toString()));
            }
            catch (final IOException busy)
            {
                // Chronicle unmaps its files lazily: detach now, freed once the last mapping goes
                UnixUsers.run(List.of("umount", "-l", mountPoint.toString()));
            }
        }
        if (mountPoint != null)
        {
            Files.deleteIfExists(mountPoint);
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldCountFailedJournalWritesKeepTransfersGoingAndRecoverWhenSpaceReturns() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "mounting a small tmpfs for the journal needs root (CI runs as root)");
        directory = SystemTests.newDaemonDirectory();
        mountPoint = Files.createTempDirectory("xferd-journalfs");
        assertThat(UnixUsers.run(List.of("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs",
            mountPoint.toString()))).isEmpty();
        mounted = true;
        final Path journalDirectory = mountPoint.resolve("journal");

        final DaemonContext context = SystemTests.daemonContext(directory);
        context.operations().journalDirectory(journalDirectory);
        daemon = XferDaemon.launch(context);
        honest = ChildProcess.start("honest", ClientRoleMain.class, "rounds", directory.toString(), "honest");
        honest.awaitLine("READY", WAIT);
        assertHonestRound();
        SystemTests.awaitCondition(() -> journalEntries(journalDirectory) > 0, WAIT, () -> "journal written");

        // fill the file system: the journal's next page cannot be backed
        final Path filler = mountPoint.resolve("filler");
        fill(filler);
        for (int i = 0; i < MAX_ROUNDS && counter(daemon, SystemCounter.JOURNAL_WRITE_FAILURES) == 0; i++)
        {
            assertHonestRound();
        }
        final long failures = counter(daemon, SystemCounter.JOURNAL_WRITE_FAILURES);
        assertThat(failures).as("journal writes into a full file system are counted").isPositive();
        for (int i = 0; i < 20; i++)
        {
            assertHonestRound();
        }
        SystemTests.awaitCondition(() -> counter(daemon, SystemCounter.JOURNAL_WRITE_FAILURES) > failures, WAIT,
            () -> "records that arrive while it is full are counted too");

        final JsonNode status = new ObjectMapper().readTree(cli("status", "--dir", directory.toString(), "--json"));
        assertThat(status.path("journal_write_failures").asLong()).isPositive();
        assertThat(cli("status", "--dir", directory.toString())).containsPattern("journal: [1-9][0-9,]* records " +
            "not written");
        assertThat(scrape(URI.create("http://127.0.0.1:" + daemon.metricsPort() + "/metrics")))
            .containsPattern("xferd_journal_write_failures_total [1-9][0-9]*\\.0");

        // space returns: the journal writes again by itself
        Files.delete(filler);
        final int entriesBefore = journalEntries(journalDirectory);
        for (int i = 0; i < MAX_ROUNDS && journalEntries(journalDirectory) <= entriesBefore; i++)
        {
            assertHonestRound();
        }
        assertThat(journalEntries(journalDirectory)).as("journal entries resume").isGreaterThan(entriesBefore);
        final long afterRecovery = counter(daemon, SystemCounter.JOURNAL_WRITE_FAILURES);
        final int entriesAfter = journalEntries(journalDirectory);
        for (int i = 0; i < 20; i++)
        {
            assertHonestRound();
        }
        SystemTests.awaitCondition(() -> journalEntries(journalDirectory) >= entriesAfter + 40, WAIT,
            () -> "the rounds after recovery are journaled: " + journalEntries(journalDirectory) + " entries, " +
                entriesAfter + " before; dropped " + counter(daemon, SystemCounter.JOURNAL_DROPPED) + "; journal " +
                "thread " + journalThread());
        assertThat(counter(daemon, SystemCounter.JOURNAL_WRITE_FAILURES)).as("nothing lost once space returned")
            .isEqualTo(afterRecovery);
        assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName).contains("xferd-journal");
    }

    private static String journalThread()
    {
        return Thread.getAllStackTraces().entrySet().stream().filter(e -> e.getKey().getName().equals("xferd-journal"))
            .map(e -> java.util.Arrays.toString(e.getValue())).findFirst().orElse("(none)");
    }

    private void assertHonestRound()
    {
        final long seed = ++rounds;
        honest.sendLine("ROUND " + seed);
        assertThat(honest.awaitLine("ROUND " + seed + " ", WAIT)).isEqualTo("ROUND " + seed + " ok");
    }

    private static void fill(final Path filler) throws IOException
    {
        final byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(filler))
        {
            for (int i = 0; i < 1024; i++)
            {
                out.write(chunk);
                out.flush();
            }
        }
        catch (final IOException expected)
        {
            return; // no space left on device: full
        }
        throw new AssertionError("a 4 MiB tmpfs took 64 MiB");
    }

    private static int journalEntries(final Path journalDirectory)
    {
        final int[] count = new int[1];
        new JournalReader().read(journalDirectory, (final JournalEntry entry) -> count[0]++);
        return count[0];
    }

    private static String cli(final String... args)
    {
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = XferdMain.commandLine(args);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(commandLine.execute(args)).as(out.toString()).isZero();
        return out.toString();
    }

    private static String scrape(final URI uri) throws IOException, InterruptedException
    {
        try (HttpClient http = HttpClient.newHttpClient())
        {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        }
    }
}
