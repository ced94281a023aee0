package io.xferd.client;

import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The public facade wires its parts as a user meets them: connect, a task through the rings, a daemon that goes, a
 * client that closes; and a submit-and-poll loop that allocates nothing. Against a fake daemon (real socket, real
 * memfd rings, real cnc.dat) on this thread.
 */
@Timeout(60)
class XferClientTest
{
    @TempDir
    Path directory;

    private FakeDaemon daemon;
    private XferClient client;
    private final CachedNanoClock clock = new CachedNanoClock();
    private final CachedEpochClock epochClock = new CachedEpochClock();

    @AfterEach
    void close()
    {
        if (client != null)
        {
            client.close();
        }
        daemon.close();
    }

    private XferClient connect(final IdleStrategy idle)
    {
        // the heartbeat stays fresh on the injected wall clock however long a loaded machine takes
        epochClock.update(ClientParts.START_MS);
        daemon = new FakeDaemon(directory, ClientParts.START_MS);
        client = daemon.connectClient(new ClientContext().segmentName("prefill-0").nanoClock(clock)
            .epochClock(epochClock).idleStrategy(idle).controlTimeoutMs(FakeDaemon.CONTROL_TIMEOUT_MS), 16, 8);
        return client;
    }

    @Test
    void shouldSayHelloWithItsNameAndExposeWhatWelcomeSaid()
    {
        connect(NoOpIdleStrategy.INSTANCE);

        assertThat(daemon.helloName()).isEqualTo("prefill-0");
        assertThat(client.ownSegment()).isEqualTo(0x5E6L);
        assertThat(client.segmentName()).isEqualTo("127.0.0.1:12001/prefill-0");
        assertThat(client.maxInFlight()).isEqualTo(16);
        assertThat(client.maxBatchEntries()).isEqualTo(8);
        assertThat(client.maxRequestLength()).isEqualTo(1L << 30);
        assertThat(client.segmentRpcPort()).isZero();
    }

    @Test
    void shouldReportATaskFromSubmitToCompletionWithItsLatencyOnTheInjectedClock()
    {
        connect(NoOpIdleStrategy.INSTANCE);
        final long batchId = client.allocateBatch(2);
        clock.update(1_000);

        final int task = client.submitTransfer(batchId, TransferRequest.write(0x1000, 7, 0x9000, 4096));
        assertThat(client.getTransferStatus(batchId, task).state()).isEqualTo(TaskStatus.PENDING);
        assertThat(client.taskLatencyNanos(batchId, task)).isEqualTo(-1);
        assertThat(client.taskState(batchId, 1)).isEqualTo(TaskStatus.WAITING);

        daemon.answerSubmits(TransferStatus.OK);
        clock.update(3_500);

        assertThat(client.getTransferStatus(batchId, task)).isEqualTo(new TaskStatus(TaskStatus.COMPLETED, 0, 4096));
        assertThat(client.taskLatencyNanos(batchId, task)).isEqualTo(2_500);
        assertThat(client.pendingTasks(batchId)).isZero();
        assertThat(client.awaitBatch(batchId, 10)).isTrue();
        client.freeBatch(batchId);
        assertThatThrownBy(() -> client.taskState(batchId, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldMoveASynchronousWriteWhileTheDaemonAnswersFromTheWait()
    {
        final FakeDaemon[] answering = new FakeDaemon[1];
        connect(new IdleStrategy()
        {
            public void idle(final int workCount)
            {
                if (workCount == 0)
                {
                    idle();
                }
            }

            public void idle()
            {
                answering[0].answerSubmits(TransferStatus.OK);
            }

            public void reset()
            {
            }
        });
        answering[0] = daemon;

        client.transferSyncWrite(7, 0x1000, 0x9000, 4096);
        client.batchTransferSyncRead(7, new long[]{1, 2, 3}, new long[]{4, 5, 6}, new long[]{7, 8, 9});
    }

    @Test
    void shouldFailPendingTasksAndRefuseCallsOnceTheDaemonHangsUp()
    {
        connect(NoOpIdleStrategy.INSTANCE);
        final long batchId = client.allocateBatch(1);
        client.submitTransfer(batchId, TransferRequest.read(0x1000, 7, 0x9000, 4096));

        daemon.closeConnection();
        client.poll();

        assertThat(client.isDaemonGone()).isTrue();
        assertThat(client.getTransferStatus(batchId, 0).status()).isEqualTo(TransferStatus.DAEMON_GONE);
        assertThatThrownBy(() -> client.openSegment("decode-0")).isInstanceOf(DaemonGoneException.class);
        assertThatThrownBy(() -> client.allocateBatch(1)).isInstanceOf(DaemonGoneException.class);
    }

    @Test
    void shouldMarkTheDaemonGoneWhenAControlCallLosesIt()
    {
        connect(NoOpIdleStrategy.INSTANCE);
        daemon.closeConnection();

        assertThatThrownBy(() -> client.openSegment("decode-0")).isInstanceOf(DaemonGoneException.class);
        assertThat(client.isDaemonGone()).isTrue();
    }

    @Test
    void shouldOpenASegmentByNameAndFreeSharedMemoryOnClose()
    {
        connect(NoOpIdleStrategy.INSTANCE);
        daemon.queueOk(1, 0x77);
        assertThat(client.openSegment("decode-0")).isEqualTo(0x77);
        assertThat(daemon.receive().getString(ControlMessages.OPEN_SEGMENT_NAME)).isEqualTo("decode-0");

        client.allocateMemory(4096);
        client.close();

        assertThatThrownBy(() -> client.allocateMemory(4096)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> client.submitTransfer(0, TransferRequest.read(0, 7, 0, 1)))
            .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> client.awaitBatch(0, 1)).isInstanceOf(IllegalStateException.class);
        assertThat(client.poll()).as("the rings are unmapped: nothing is read").isZero();
        assertThat(client.isDaemonGone()).as("closing is not the daemon going").isFalse();
        client.close();
    }

    @Test
    void shouldSubmitAndPollWithoutAllocating()
    {
        connect(NoOpIdleStrategy.INSTANCE);
        final TransferRequest request = TransferRequest.write(0x1000, 7, 0x9000, 4096);
        final TransferBatch batch = new TransferBatch(4).reset(Opcode.WRITE, 7).add(1, 2, 3).add(4, 5, 6);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final int rounds = 20_000;

        roundTrips(request, batch, rounds);
        final long before = threads.getCurrentThreadAllocatedBytes();
        roundTrips(request, batch, rounds);
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(allocated).as("bytes allocated by %d submit/complete/poll rounds", rounds).isLessThan(rounds);
    }

    private void roundTrips(final TransferRequest request, final TransferBatch batch, final int rounds)
    {
        for (int i = 0; i < rounds; i++)
        {
            final long batchId = client.allocateBatch(2);
            client.submitTransfer(batchId, request);
            client.submitBatch(batchId, batch);
            daemon.answerSubmits(TransferStatus.OK);
            // a poll stops at the end of the ring's buffer: the rest comes with the next
            int polls = 1;
            while (client.pendingTasks(batchId) != 0 && polls < 3)
            {
                polls++;
            }
            if (client.pendingTasks(batchId) != 0 || client.taskState(batchId, 1) != TaskStatus.COMPLETED)
            {
                throw new AssertionError("round " + i + ": " + client.getTransferStatus(batchId, 0) + ", " +
                    client.getTransferStatus(batchId, 1));
            }
            client.freeBatch(batchId);
        }
    }
}
