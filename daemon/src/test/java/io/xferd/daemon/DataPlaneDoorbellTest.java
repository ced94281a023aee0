package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A quiet daemon's intake thread sleeps in futex_waitv on its clients' submit-ring doorbells, and a client's next
 * request wakes it: the daemon runs in its own process with a sleep of an hour, so that only the doorbell (a word of
 * the client's rings file, a real shared mapping) can have brought the request's completion within the test's
 * bounded wait. Whether the thread sleeps is read from the kernel (/proc/PID/task/TID/syscall), not guessed from
 * timing.
 */
@Tag("integration")
@Timeout(240)
class DataPlaneDoorbellTest
{
    private static final int FUTEX_WAITV = 449;
    private static final int LENGTH = 4096;
    private static final long HOUR_MS = 3_600_000L;

    private Path directory;
    private ChildProcess daemon;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = ChildProcess.start("sleepy-daemon", SleepyDaemonMain.class, directory.toString(),
            Long.toString(HOUR_MS), "30000"); // a conductor starved on a loaded machine is not a daemon gone
        daemon.awaitLine("SERVING", SystemTests.DAEMON_START);
    }

    @AfterEach
    void stopEverything() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        if (daemon.isAlive())
        {
            daemon.sendLine("EXIT");
            daemon.awaitExit(SystemTests.WAIT);
        }
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldWakeASleepingDaemonWhenAClientSubmits()
    {
        final XferClient client = track(XferClient.connect(SystemTests.clientContext(directory, "sleeper-client")));
        final SharedBuffer memory = client.allocateMemory(LENGTH);
        client.registerMemory(memory, "cpu:0");
        writeAndCheck(client, memory, 1);

        awaitIntakeAsleep();
        writeAndCheck(client, memory, 2); // within the client's 10 s control timeout, against an hour's sleep

        awaitIntakeAsleep();
        writeAndCheck(client, memory, 3); // it went back to sleep and the doorbell was marked again
    }

    @Test
    void shouldWakeForAClientThatConnectedWhileTheDaemonSlept()
    {
        final XferClient first = track(XferClient.connect(SystemTests.clientContext(directory, "first")));
        final SharedBuffer firstMemory = first.allocateMemory(LENGTH);
        first.registerMemory(firstMemory, "cpu:0");
        writeAndCheck(first, firstMemory, 4);
        awaitIntakeAsleep();

        final XferClient late = track(XferClient.connect(SystemTests.clientContext(directory, "late")));
        final SharedBuffer lateMemory = late.allocateMemory(LENGTH);
        late.registerMemory(lateMemory, "cpu:0");
        awaitIntakeAsleep(); // asleep again, now with the late client's doorbell marked
        writeAndCheck(late, lateMemory, 5);
    }

    @Test
    void shouldWakeForAClientWithoutTheLibraryThatRingsAfterItsRecord()
    {
        // RawControlSession, as the tests that speak the protocol by hand use it: before it rang, each of its
        // requests after a pause waited out intake's whole sleep (GpuOverTcpTest, ProcessMemoryTest)
        final RawControlSession raw = track(RawControlSession.hello(directory, "raw", SystemTests.WAIT));
        SystemTests.awaitCondition(raw::doorbellMarked, SystemTests.WAIT, () -> "intake marks the raw client's doorbell");
        awaitIntakeAsleep();

        // a WRITE to a segment nobody has: any status shows intake took it, within the wait against an hour's sleep
        assertThat(raw.submitAndAwait(Opcode.WRITE, raw.segmentHandle() + 1, 0x1000, 0x2000, 64, SystemTests.WAIT))
            .isNotEqualTo(TransferStatus.OK);
    }

    @Test
    void shouldStopWhileItsIntakeThreadSleeps()
    {
        final XferClient client = XferClient.connect(SystemTests.clientContext(directory, "leaving"));
        final SharedBuffer memory = client.allocateMemory(LENGTH);
        client.registerMemory(memory, "cpu:0");
        writeAndCheck(client, memory, 6);
        client.close();
        awaitIntakeAsleep();

        daemon.sendLine("EXIT");

        assertThat(daemon.awaitExit(SystemTests.WAIT)).isEqualTo(0); // not after the hour's sleep
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        resources.add(resource);
        return resource;
    }

    /**
     * WRITE the seed's first half into the second half of the client's own memory; throws if it does not complete
     * within the client's control timeout.
     */
    private static void writeAndCheck(final XferClient client, final SharedBuffer memory, final long seed)
    {
        SystemTests.fill(memory.segment().asSlice(0, LENGTH / 2), seed);
        client.transferSyncWrite(client.ownSegment(), memory.address(), memory.address() + LENGTH / 2, LENGTH / 2);
        assertThat(SystemTests.firstMismatch(memory.segment(), LENGTH / 2, SystemTests.randomBytes(seed, LENGTH / 2),
            0, LENGTH / 2)).isEqualTo(-1);
    }

    private void awaitIntakeAsleep()
    {
        SystemTests.awaitCondition(() -> threadsIn(FUTEX_WAITV) == 1, SystemTests.WAIT,
            () -> "the daemon's intake thread blocks in futex_waitv (threads in it: " + threadsIn(FUTEX_WAITV) + ")");
    }

    /**
     * @return how many of the daemon's threads are blocked in the system call {@code number} now.
     */
    private int threadsIn(final int number)
    {
        final String prefix = number + " ";
        int count = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(daemon.pid()), "task")))
        {
            for (final Path task : (Iterable<Path>)tasks::iterator)
            {
                try
                {
                    if (Files.readString(task.resolve("syscall")).startsWith(prefix))
                    {
                        count++;
                    }
                }
                catch (final IOException gone)
                {
                    // the thread ended meanwhile
                }
            }
        }
        catch (final IOException ex)
        {
            throw new AssertionError("cannot list the daemon's threads", ex);
        }
        return count;
    }
}
