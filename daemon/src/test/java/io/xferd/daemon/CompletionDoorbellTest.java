package io.xferd.daemon;

import io.xferd.client.ClientContext;
import io.xferd.client.DoorbellIdleStrategy;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client waiting for a completion sleeps in the kernel on its completion ring's doorbell, and the daemon that
 * commits the completion wakes it. The daemon runs in its own process and is stopped (SIGSTOP) while the client
 * submits, so the client is asleep before the completion exists (read from the kernel: a thread of this process in
 * a shared FUTEX_WAIT), and continued then; the client's sleep is an hour, so only the daemon's wake can have ended
 * the wait within the test's bounded one. A client that never arms the word (an older one) is served the same way.
 */
@Tag("integration")
@Timeout(240)
class CompletionDoorbellTest
{
    private static final int LENGTH = 4096;
    /** The waiter's thread name, 15 characters: all of it is in /proc's comm, which tells it from other tests' threads. */
    private static final String WAITER = "doorbell-waiter";
    /** A thread of its own per task: a waiter that sleeps out its hour when the feature breaks holds only that. */
    private static final Executor OWN_THREAD = task -> Thread.ofPlatform().daemon().name(WAITER).start(task);
    private static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);
    private static final int SYS_FUTEX = "aarch64".equals(System.getProperty("os.arch")) ? 98 : 202;
    private static final int SIGCONT = 18;
    private static final int SIGSTOP = 19;

    private Path directory;
    private ChildProcess daemon;
    private XferClient client;
    private boolean clientStuck;

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = ChildProcess.start("doorbell-daemon", SleepyDaemonMain.class, directory.toString(), "100",
            "120000"); // the client must not count a daemon it stopped on purpose gone
        daemon.awaitLine("SERVING", SystemTests.DAEMON_START);
    }

    @AfterEach
    void stopEverything()
    {
        try
        {
            signal(SIGCONT);
            if (client != null && !clientStuck)
            {
                client.close(); // a client whose waiter sleeps out its hour holds its poll lock: left to the exit
            }
            if (daemon.isAlive())
            {
                daemon.sendLine("EXIT");
                daemon.awaitExit(SystemTests.WAIT);
            }
        }
        finally
        {
            daemon.close();
            SystemTests.deleteRecursively(directory);
        }
    }

    @Test
    void shouldWakeAClientAsleepOnItsCompletionDoorbell() throws Exception
    {
        connect(new DoorbellIdleStrategy(0, 0, HOUR_NS));

        for (long seed = 1; seed <= 3; seed++)
        {
            writeWhileTheDaemonIsStopped(seed, true);
        }
    }

    @Test
    void shouldServeAClientThatNeverArmsTheDoorbell() throws Exception
    {
        connect(ClientContext.parkingIdleStrategy());

        writeWhileTheDaemonIsStopped(4, false);
    }

    private void connect(final IdleStrategy idle)
    {
        client = XferClient.connect(SystemTests.clientContext(directory, "doorbell-client").idleStrategy(idle));
    }

    private void writeWhileTheDaemonIsStopped(final long seed, final boolean awaitSleep) throws Exception
    {
        final SharedBuffer memory = client.allocateMemory(LENGTH);
        client.registerMemory(memory, "cpu:0");
        SystemTests.fill(memory.segment().asSlice(0, LENGTH / 2), seed);

        final CompletableFuture<Boolean> waiter;
        signal(SIGSTOP);
        try
        {
            final long batchId = client.allocateBatch(1);
            client.submitTransfer(batchId, TransferRequest.write(memory.address(), client.ownSegment(),
                memory.address() + LENGTH / 2, LENGTH / 2));
            waiter = CompletableFuture.supplyAsync(
                // an hour: a sleep never outlasts its wait's timeout, so only the daemon's wake ends it within WAIT
                () -> client.awaitBatch(batchId, TimeUnit.HOURS.toMillis(1)), OWN_THREAD);
            if (awaitSleep)
            {
                SystemTests.awaitCondition(() -> waitersInSharedFutexWait() == 1, SystemTests.WAIT,
                    () -> "the waiter thread sleeps in a shared FUTEX_WAIT (now " + waitersInSharedFutexWait() +
                        " do)");
            }
        }
        finally
        {
            signal(SIGCONT); // a daemon left stopped would outlive the test: neither its watchdog nor EOF can act
        }

        clientStuck = true;
        assertThat(waiter.get(SystemTests.WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        clientStuck = false;
        assertThat(SystemTests.firstMismatch(memory.segment(), LENGTH / 2, SystemTests.randomBytes(seed, LENGTH / 2),
            0, LENGTH / 2)).isEqualTo(-1);
    }

    private void signal(final int signal)
    {
        try
        {
            final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(daemon.pid()))
                .redirectErrorStream(true).start();
            assertThat(kill.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        catch (final IOException | InterruptedException ex)
        {
            throw new AssertionError("kill -" + signal, ex);
        }
    }

    /**
     * @return how many of this test's waiter threads are in futex(2) with op FUTEX_WAIT (0: shared, no clock flags)
     * now; parked Java threads wait with private futex ops, and threads other tests left in this JVM are not counted.
     */
    private static int waitersInSharedFutexWait()
    {
        int count = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task")))
        {
            for (final Path task : (Iterable<Path>)tasks::iterator)
            {
                try
                {
                    if (!Files.readString(task.resolve("comm")).trim().equals(WAITER))
                    {
                        continue;
                    }
                    final List<String> fields = List.of(Files.readString(task.resolve("syscall")).trim().split(" "));
                    if (fields.size() > 2 && fields.get(0).equals(Integer.toString(SYS_FUTEX)) &&
                        fields.get(2).equals("0x0"))
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
            throw new AssertionError("cannot list this process's threads", ex);
        }
        return count;
    }
}
