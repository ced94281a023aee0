package io.xferd.client;

import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import static io.xferd.client.ClientParts.TIMEOUT_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the daemon writes on the completion ring (a real memfd mapped twice) finishes tasks and queues
 * notifications; waiting for a batch polls until every task finished, gives up after a stall of the timeout on the
 * injected clock, and ends with {@link DaemonGoneException} when the daemon goes. No sleeps: the clock moves one
 * step per idle.
 */
@Timeout(30)
class CompletionPollerTest
{
    @TempDir
    Path directory;

    private ClientParts parts;
    private CompletionPoller poller;
    private BatchTable batches;

    @BeforeEach
    void connect()
    {
        parts = new ClientParts(directory, 8, 8);
        poller = parts.poller;
        batches = parts.batches;
    }

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldFinishTheTaskACompletionNamesAtTheTimeItIsSeen()
    {
        final long batchId = batches.allocate(2);
        final BatchTable.Batch batch = batches.batch(batchId);
        final long first = batch.requestId(batches.start(batch, 100));
        final long second = batch.requestId(batches.start(batch, 100));
        parts.nanoClock.update(900);

        parts.daemon.complete(second, TransferStatus.OK, 4096);
        parts.daemon.complete(first, TransferStatus.TARGET_GONE, 0);

        assertThat(poller.poll()).isEqualTo(2);
        assertThat(batch.state[1]).isEqualTo(TaskStatus.COMPLETED);
        assertThat(batch.bytes[1]).isEqualTo(4096);
        assertThat(batch.completeNanos[1]).isEqualTo(900);
        assertThat(batch.state[0]).isEqualTo(TaskStatus.FAILED);
        assertThat(batch.status[0]).isEqualTo(TransferStatus.TARGET_GONE);
        assertThat(batches.inFlight()).isZero();
        assertThat(poller.poll()).as("each record is taken once").isZero();
    }

    @Test
    void shouldQueueNotificationsInArrivalOrderAndHandEachOutOnce()
    {
        parts.daemon.notify("127.0.0.1:12001/decode-0", "kv ready", 7);
        parts.daemon.notify("127.0.0.1:12001/decode-1", "done", 0);

        poller.poll();
        final List<Notification> taken = poller.takeNotifications();

        assertThat(taken).hasSize(2);
        assertThat(taken.get(0).source()).isEqualTo("127.0.0.1:12001/decode-0");
        assertThat(taken.get(0).messageAsString()).isEqualTo("kv ready");
        assertThat(taken.get(0).traceId()).isEqualTo(7);
        assertThat(taken.get(1).messageAsString()).isEqualTo("done");
        assertThat(poller.takeNotifications()).isEmpty();
    }

    @Test
    void shouldLookAtTheDaemonOnlyWhenTheRingIsEmpty()
    {
        final BatchTable.Batch batch = batches.batch(batches.allocate(2));
        final long id = batch.requestId(batches.start(batch, 0));
        batches.start(batch, 0);
        parts.daemon.complete(id, TransferStatus.OK, 1);
        parts.daemon.closeConnection();

        assertThat(poller.poll()).isOne();
        assertThat(parts.liveness.isGone()).as("completions first").isFalse();
        assertThat(batch.state[0]).isEqualTo(TaskStatus.COMPLETED);

        assertThat(poller.poll()).isZero();
        assertThat(parts.liveness.isGone()).isTrue();
        assertThat(batch.status[1]).isEqualTo(TransferStatus.DAEMON_GONE);
    }

    @Test
    void shouldWaitUntilEveryTaskFinishedAndSayWhetherAllCompleted()
    {
        final long batchId = batches.allocate(3);
        final BatchTable.Batch batch = batches.batch(batchId);
        final long[] ids = {
            batch.requestId(batches.start(batch, 0)),
            batch.requestId(batches.start(batch, 0)),
            batch.requestId(batches.start(batch, 0))};
        final int[] next = {0};
        parts.daemonStep = () ->
        {
            if (next[0] < ids.length)
            {
                parts.daemon.complete(ids[next[0]], next[0] == 1 ? TransferStatus.TARGET_GONE : TransferStatus.OK, 1);
                next[0]++;
            }
        };

        assertThat(poller.awaitBatch(batchId, TIMEOUT_MS)).as("task 1 failed").isFalse();
        assertThat(batch.pending).isZero();
        assertThat(next[0]).isEqualTo(3);

        final long okId = batches.allocate(1);
        final BatchTable.Batch ok = batches.batch(okId);
        final long onlyId = ok.requestId(batches.start(ok, 0));
        parts.daemonStep = () -> parts.daemon.complete(onlyId, TransferStatus.OK, 1);
        assertThat(poller.awaitBatch(okId, TIMEOUT_MS)).isTrue();
    }

    @Test
    void shouldReturnWhicheverBatchFinishedFirstNotTheOldest()
    {
        final long oldestId = batches.allocate(1);
        final BatchTable.Batch oldest = batches.batch(oldestId);
        final long oldestTask = oldest.requestId(batches.start(oldest, 0));
        final long youngerId = batches.allocate(2);
        final BatchTable.Batch younger = batches.batch(youngerId);
        final long[] youngerTasks = {
            younger.requestId(batches.start(younger, 0)),
            younger.requestId(batches.start(younger, 0))};
        final int[] next = {0};
        parts.daemonStep = () ->
        {
            if (next[0] < youngerTasks.length)
            {
                parts.daemon.complete(youngerTasks[next[0]++], TransferStatus.OK, 1);
            }
        };

        final long[] inFlight = {oldestId, youngerId, 0};
        assertThat(poller.awaitAnyBatch(inFlight, 2, TIMEOUT_MS)).as("the younger batch finished").isOne();
        assertThat(younger.pending).isZero();
        assertThat(oldest.pending).as("the oldest is still out").isOne();

        parts.daemonStep = () -> parts.daemon.complete(oldestTask, TransferStatus.OK, 1);
        inFlight[1] = oldestId;
        assertThat(poller.awaitAnyBatch(inFlight, 1, TIMEOUT_MS)).isZero();
        assertThatThrownBy(() -> poller.awaitAnyBatch(inFlight, 4, TIMEOUT_MS))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldGiveUpAfterTheTimeoutWithoutACompletionButNotWhileCompletionsKeepComing()
    {
        final long batchId = batches.allocate(3);
        final BatchTable.Batch batch = batches.batch(batchId);
        final long[] ids = new long[3];
        for (int i = 0; i < 3; i++)
        {
            ids[i] = batch.requestId(batches.start(batch, 0));
        }
        // one completion every 40 ms of a 50 ms timeout: 120 ms in all, never a 50 ms stall
        final int[] idles = {0};
        final int[] next = {0};
        parts.daemonStep = () ->
        {
            if (++idles[0] % 40 == 0 && next[0] < 2)
            {
                parts.daemon.complete(ids[next[0]++], TransferStatus.OK, 1);
            }
        };
        final long start = parts.nanoClock.nanoTime();

        assertThatThrownBy(() -> poller.awaitBatch(batchId, TIMEOUT_MS))
            .isInstanceOf(XferException.class)
            .hasMessageContaining("1 task(s) without completion for 50 ms");

        final long waitedMs = (parts.nanoClock.nanoTime() - start) / 1_000_000;
        assertThat(waitedMs).as("80 ms of progress, then a 50 ms stall").isBetween(80L + TIMEOUT_MS, 82L + TIMEOUT_MS);
        assertThat(batch.state[0]).isEqualTo(TaskStatus.COMPLETED);
        assertThat(batch.state[2]).isEqualTo(TaskStatus.PENDING);
    }

    @Test
    void shouldEndTheWaitWithDaemonGoneWhenTheDaemonHangsUp()
    {
        final long batchId = batches.allocate(1);
        final BatchTable.Batch batch = batches.batch(batchId);
        batches.start(batch, 0);
        parts.daemonStep = parts.daemon::closeConnection;

        assertThatThrownBy(() -> poller.awaitBatch(batchId, TIMEOUT_MS))
            .isInstanceOf(DaemonGoneException.class);
        assertThat(batch.status[0]).isEqualTo(TransferStatus.DAEMON_GONE);
        assertThat(parts.idles).as("noticed at the next check, not at the timeout").isLessThan(5);
    }

    @Test
    void shouldFindACompletionThatNoDoorbellAnnouncedAtTheEndOfItsBoundedSleep() throws Exception
    {
        // an older daemon commits completions and never rings the completion doorbell: a client that sleeps on it
        // still finds them, one bounded sleep (1 ms here) later
        final CompletionPoller sleeper = new CompletionPoller(parts.rings.completionRing(), batches, parts.liveness,
            parts.nanoClock, new DoorbellIdleStrategy(0, 0, 1_000_000));
        final long batchId = batches.allocate(1);
        final BatchTable.Batch batch = batches.batch(batchId);
        final long id = batch.requestId(batches.start(batch, 0));
        final Thread olderDaemon = new Thread(() ->
        {
            LockSupport.parkNanos(20_000_000); // the waiter is asleep by then, most likely; either way it must finish
            parts.daemon.complete(id, TransferStatus.OK, 1);
        });
        olderDaemon.start();
        try
        {
            assertThat(sleeper.awaitBatch(batchId, TIMEOUT_MS)).isTrue(); // the injected clock does not move
        }
        finally
        {
            olderDaemon.join();
            sleeper.close();
        }
    }

    @Test
    void shouldWakeASleeperWhenClosedAndEndItsWait() throws Exception
    {
        // a waiter that would sleep an hour on the doorbell: only close's wake ends it within the test
        final CompletionPoller sleeper = new CompletionPoller(parts.rings.completionRing(), batches, parts.liveness,
            parts.nanoClock, new DoorbellIdleStrategy(0, 0, TimeUnit.HOURS.toNanos(1)));
        final long batchId = batches.allocate(1);
        batches.start(batches.batch(batchId), 0);
        final CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(
            () -> sleeper.awaitBatch(batchId, TimeUnit.HOURS.toMillis(1)),
            task -> Thread.ofPlatform().daemon().name(SLEEPER).start(task));
        for (int i = 0; i < 2_000 && !sleeperInFutex(); i++)
        {
            Thread.sleep(5);
        }
        assertThat(sleeperInFutex()).as("asleep on the doorbell").isTrue();

        CompletableFuture.runAsync(sleeper::close, task -> Thread.ofPlatform().daemon().start(task))
            .get(10, TimeUnit.SECONDS);

        assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
            .hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void shouldTakeNothingOnceClosed()
    {
        final BatchTable.Batch batch = batches.batch(batches.allocate(1));
        final long id = batch.requestId(batches.start(batch, 0));
        parts.daemon.complete(id, TransferStatus.OK, 1);

        poller.close();

        assertThat(poller.poll()).isZero();
        assertThat(batch.state[0]).isEqualTo(TaskStatus.PENDING);
    }

    @Test
    void shouldNoticeAGoneDaemonWithinAFewEmptyPollsOfACallerSpinningOnPoll()
    {
        final BatchTable.Batch batch = batches.batch(batches.allocate(1));
        batches.start(batch, 0);
        assertThat(poller.poll()).isZero(); // the first empty poll looks at once
        assertThat(parts.liveness.isGone()).isFalse();

        parts.daemon.closeConnection();
        parts.nanoClock.advance(ClientParts.CHECK_INTERVAL_NS);
        int polls = 0;
        while (!parts.liveness.isGone() && polls < 10 * DaemonLiveness.EMPTY_POLLS_PER_CLOCK_READ)
        {
            poller.poll();
            polls++;
        }

        assertThat(polls).isBetween(1, DaemonLiveness.EMPTY_POLLS_PER_CLOCK_READ);
        assertThat(batch.status[0]).isEqualTo(TransferStatus.DAEMON_GONE);
    }

    @Test
    void shouldLookAtTheClockAtTheNextEmptyPollOfACallerThatIdlesBetweenPolls()
    {
        assertThat(poller.poll()).isZero();
        parts.daemon.closeConnection();
        parts.nanoClock.advance(ClientParts.CHECK_INTERVAL_NS);

        parts.liveness.checkAtNextEmptyPoll();
        assertThat(poller.poll()).isZero();

        assertThat(parts.liveness.isGone()).isTrue();
    }

    @Test
    void shouldTakeEachRecordOnceWhenTwoThreadsPollAtOnce() throws Exception
    {
        final Random random = new Random(16);
        final int tasks = 400;
        for (int round = 0; round < 50; round++)
        {
            final long batchId = batches.allocate(tasks);
            final BatchTable.Batch batch = batches.batch(batchId);
            final int[] sent = new int[tasks];
            for (int task = 0; task < tasks; task++)
            {
                batches.start(batch, 0);
            }
            final CyclicBarrier start = new CyclicBarrier(2);
            final AtomicInteger taken = new AtomicInteger();
            final AtomicReference<Throwable> fault = new AtomicReference<>();
            final Runnable pollUntilDone = () ->
            {
                try
                {
                    start.await();
                    for (int polls = 0; polls < 10_000_000 && taken.get() < tasks; polls++)
                    {
                        taken.addAndGet(poller.poll());
                    }
                }
                catch (final Throwable ex)
                {
                    fault.compareAndSet(null, ex);
                }
            };
            final Thread other = new Thread(pollUntilDone);
            other.start();
            for (int task = 0; task < tasks; task++)
            {
                sent[task] = random.nextInt(4) == 0 ? TransferStatus.TARGET_GONE : TransferStatus.OK;
                parts.daemon.complete(batch.requestId(task), sent[task], task);
            }
            pollUntilDone.run();
            other.join();

            assertThat(fault.get()).isNull();
            assertThat(taken.get()).as("round " + round + ": each record taken once").isEqualTo(tasks);
            assertThat(batch.pending).isZero();
            for (int task = 0; task < tasks; task++)
            {
                assertThat(batch.status[task]).isEqualTo(sent[task]);
                assertThat(batch.bytes[task]).isEqualTo(task);
            }
            assertThat(batches.inFlight()).isZero();
            batches.free(batchId);
        }
    }

    private static final String SLEEPER = "poller-sleeper";

    /**
     * @return whether the thread named {@link #SLEEPER} is in futex(2) now (/proc's view of its system call).
     */
    private static boolean sleeperInFutex() throws IOException
    {
        final String futex = "aarch64".equals(System.getProperty("os.arch")) ? "98 " : "202 ";
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task")))
        {
            for (final Path task : (Iterable<Path>)tasks::iterator)
            {
                try
                {
                    if (Files.readString(task.resolve("comm")).trim().equals(SLEEPER) &&
                        Files.readString(task.resolve("syscall")).startsWith(futex))
                    {
                        return true;
                    }
                }
                catch (final IOException gone)
                {
                    // the thread ended meanwhile
                }
            }
        }
        return false;
    }
}
