package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.DozingBackoffIdleStrategy;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.session.SubmitRingDoorbells;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitBatchFlyweight;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Intake and its idle strategy on one thread, driven a duty cycle at a time, with the doorbells' blocking step
 * recorded instead of taken: intake sleeps on its clients' doorbells only if, after marking them and looking at the
 * rings once more, nothing is left that would become runnable without a ring. The client's record is written without
 * ringing: the interleaving where its fence and load of the doorbell word came just before intake's mark.
 */
@Timeout(10)
class IntakeDoorbellSleepTest
{
    private static final long SLEEP_NS = 3_600_000_000_000L;
    private static final int TRACKERS = 4;
    private static final int MAX_CYCLES = 1_000;

    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SessionTable registry = new SessionTable(4);
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
    private final TestClient alice = new TestClient(0, "alice", 64 * 1024);
    private final TransferPipeline pipeline = new TransferPipeline(64, 1);
    private final List<String> waits = new ArrayList<>();
    private SubmitAdapter intake;
    private DozingBackoffIdleStrategy idle;

    @BeforeEach
    void start()
    {
        registry.add(alice.session);
        intake = new SubmitAdapter(pipeline.ring(), registry, new ManyToOneConcurrentArrayQueue<ClientSession>(8),
            new SystemCounters(countersManager), new CachedNanoClock(), TransferJournal.DISABLED, 64, TRACKERS);
        // as XferDaemon's, where every request in flight is one the TCP transport answers itself (so none counts)
        final SubmitRingDoorbells doorbells = new SubmitRingDoorbells(registry,
            () -> pipeline.isIdle() && !intake.waitsForBatchTracker(),
            (waiters, count, deadlineNanos, timespec) -> waits.add("waitv(" + count + ")"));
        // 2 spins and 1 yield, then the doorbell, as the daemon's data plane after its spins and yields
        idle = new DozingBackoffIdleStrategy(2, 1, 1, 1, 10, 1);
        idle.doorbell(doorbells, SLEEP_NS).sleepOnDoorbellAfter(idle.idlesBeforeParking());
    }

    @Test
    void shouldSleepOnTheDoorbellsWhenItsLastLookFoundNothing() throws Exception
    {
        takeEveryTracker();
        dutyCyclesUntilMarked();

        idle.idle(intake.doWork()); // the look after marking: nothing

        assertThat(waits).as("asleep on its own word and alice's").containsExactly("waitv(2)");
    }

    @Test
    void shouldNotSleepWhenItsLastLookFoundABatchWaitingForATrackerThatACompletionGivesBackWithoutRinging()
        throws Exception
    {
        takeEveryTracker();
        dutyCyclesUntilMarked();
        submitBatch(TRACKERS); // published as intake marked the word: the client saw it unmarked and did not ring

        idle.idle(intake.doWork()); // the look after marking finds it, with no tracker to take

        assertThat(intake.waitsForBatchTracker()).as("the batch stays in its ring").isTrue();
        // asleep, the batch would wait out the whole sleep: its tracker comes back with a TCP completion, which
        // rings no doorbell
        assertThat(waits).as("not asleep").isEmpty();
        idle.idle(intake.doWork());
        idle.idle(intake.doWork());
        assertThat(waits).as("it backs off instead, while the batch waits").isEmpty();
    }

    /**
     * Every batch tracker of alice's is out: its batch went to the transport (taken from the pipeline, not finished).
     */
    private void takeEveryTracker() throws Exception
    {
        for (int i = 0; i < TRACKERS; i++)
        {
            submitBatch(i);
        }
        assertThat(intake.doWork()).isPositive();
        pipeline.workerPoller(0).poll((command, sequence, endOfBatch) ->
        {
            if (command.submitter != null)
            {
                command.submitter.release();
            }
            command.clear();
            return true;
        });
        assertThat(pipeline.isIdle()).isTrue();
    }

    private void dutyCyclesUntilMarked()
    {
        final int index = alice.submitter.buffer().capacity() - RingsFileDescriptor.TRAILER_LENGTH +
            RingsFileDescriptor.SUBMIT_DOORBELL_OFFSET;
        for (int cycle = 0; alice.submitter.buffer().getIntVolatile(index) != RingsFileDescriptor.DOORBELL_ASLEEP;
            cycle++)
        {
            assertThat(cycle).as("intake marks the doorbells after its spins and yields").isLessThan(MAX_CYCLES);
            idle.idle(intake.doWork());
        }
        assertThat(waits).as("marked, one more look before any sleep").isEmpty();
    }

    private void submitBatch(final long requestId)
    {
        new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(requestId, Opcode.WRITE, 1, alice.session.segmentHandle(), 0, 1, null, 0, 0)
            .entry(0, 0x1000, 0x2000, 64);
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0, SubmitBatchFlyweight.bodyLength(1, 0)))
            .isTrue();
    }
}
