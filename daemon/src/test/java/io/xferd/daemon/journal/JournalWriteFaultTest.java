package io.xferd.daemon.journal;

import io.xferd.daemon.journal.queue.JournalQueues;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writes that fault (SIGBUS: a page of a mapped journal file that a full tmpfs cannot back), with the free-space
 * guard off so that they happen: each is counted, the agent survives, and once space returns every record after
 * it is in the journal, in order, with nothing written over (the cycle file being written is kept aside).
 */
@Tag("integration")
@Timeout(120)
class JournalWriteFaultTest
{
    private final CountersManager counters = new CountersManager(
        new UnsafeBuffer(new byte[64 * 1024]), new UnsafeBuffer(new byte[16 * 1024]));
    private final AtomicCounter dropped = counters.newCounter("journal dropped");
    private final AtomicCounter writeFailures = counters.newCounter("journal write failures");
    private Path mountPoint;
    private boolean mounted;

    @AfterEach
    void unmount() throws Exception
    {
        if (mounted)
        {
            try
            {
                run("umount", mountPoint.toString());
            }
            catch (final IOException busy)
            {
                // Chronicle unmaps its files lazily: detach now, freed once the last mapping goes
                run("umount", "-l", mountPoint.toString());
            }
        }
        if (mountPoint != null)
        {
            Files.deleteIfExists(mountPoint);
        }
    }

    @Test
    void shouldCountFaultedWritesAndJournalEveryRecordAfterSpaceReturns() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "mounting a small tmpfs for the journal needs root (CI runs as root)");
        mountPoint = Files.createTempDirectory("xferd-journalfault");
        run("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", mountPoint.toString());
        mounted = true;
        final Path directory = mountPoint.resolve("journal");
        final JournalRecorder recorder = new JournalRecorder(1 << 20, dropped, new JournalNames());
        final JournalAgent agent = new JournalAgent(recorder,
            new JournalAppender(() -> JournalQueues.openForAppend(directory, "FAST_HOURLY"), writeFailures, 0),
            24, null, -1);
        long id = 0;
        for (; id < 100; id++)
        {
            recorder.onCompleted(0, id, 0, Opcode.READ, TransferStatus.OK, 64, 64, 0, 1, 0, 1, 2);
        }
        agent.doWork();

        final Path filler = mountPoint.resolve("filler");
        fill(filler);
        for (int i = 0; i < 100_000 && writeFailures.get() == 0; i++)
        {
            recorder.onSubmitted(0, id, 0, Opcode.READ, 64, 1, 2);
            recorder.onCompleted(0, id++, 0, Opcode.READ, TransferStatus.OK, 64, 64, 0, 1, 0, 1, 2);
            agent.doWork();
        }
        assertThat(writeFailures.get()).as("a faulted write is counted").isPositive();

        Files.delete(filler);
        final long firstAfter = id;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (agent.doWork() == 0 || recorder.ring().size() > 0)
        {
            assertThat(System.nanoTime()).as("reopened within 30 s").isLessThan(deadline);
            Thread.sleep(10); // the reopen is tried once a second
        }
        final long failures = writeFailures.get();
        for (int i = 0; i < 500; i++)
        {
            recorder.onCompleted(0, id++, 0, Opcode.READ, TransferStatus.OK, 64, 64, 0, 1, 0, 1, 2);
            agent.doWork();
        }
        agent.onClose();

        assertThat(writeFailures.get()).as("nothing lost once space returned").isEqualTo(failures);
        final List<Long> ids = new ArrayList<>();
        new JournalReader().read(directory, entry -> ids.add(entry.requestId()));
        final List<Long> expected = new ArrayList<>();
        for (long i = id - 500; i < id; i++)
        {
            expected.add(i);
        }
        assertThat(ids.subList(Math.max(0, ids.size() - 500), ids.size())).containsExactlyElementsOf(expected);
        final long firstOfLast = id - 500;
        assertThat(ids).allMatch(requestId -> requestId < firstAfter || requestId >= firstOfLast)
            .doesNotHaveDuplicates();
        try (Stream<Path> files = Files.list(directory))
        {
            assertThat(files.map(path -> path.getFileName().toString()))
                .anyMatch(name -> name.endsWith(JournalAppender.DAMAGED_SUFFIX));
        }
    }

    private static void fill(final Path filler) throws IOException
    {
        try (OutputStream out = Files.newOutputStream(filler))
        {
            for (int i = 0; i < 1024; i++)
            {
                out.write(new byte[64 * 1024]);
            }
        }
        catch (final IOException expected)
        {
            return;
        }
        throw new AssertionError("a 4 MiB tmpfs took 64 MiB");
    }

    private static void run(final String... command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            throw new IOException(List.of(command) + " failed: " + output);
        }
    }
}
