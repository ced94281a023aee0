package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SessionTable;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Intake, single-threaded: the test writes records into clients' own submit rings as the client library does, calls
 * {@code doWork()} and reads what reached the pipeline. Clients are served in turn, a client that breaks its ring's
 * protocol is cut off without anyone else noticing, and a full pipeline leaves records where they are.
 */
@Timeout(10)
class SubmitAdapterTest
{
    private static final int MAX_BATCH_ENTRIES = 64;

    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SystemCounters counters = new SystemCounters(countersManager);
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
    private final SessionTable registry = new SessionTable(4);
    private final CachedNanoClock clock = new CachedNanoClock();
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
    private final TestClient alice = new TestClient(0, "alice", 64 * 1024);
    private final TestClient bob = new TestClient(1, "bob", 64 * 1024);
    private TransferPipeline pipeline;
    private SubmitAdapter intake;

    /** What reached the pipeline: the client's name and the request id, in pipeline order. */
    private record Published(String client, long requestId, int batchEntry)
    {
    }

    private void start(final int pipelineSize)
    {
        pipeline = new TransferPipeline(pipelineSize, 1);
        intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters, clock, TransferJournal.DISABLED,
            MAX_BATCH_ENTRIES, 4);
        registry.add(alice.session);
        registry.add(bob.session);
    }

    /** Longer than a request that may ride in a local run: each such request is a pipeline command of its own. */
    private static final long ALONE = LocalRun.MAX_MEMBER_LENGTH + 1;

    private void submit(final TestClient client, final long requestId)
    {
        submit(client, requestId, 64);
    }

    private void submit(final TestClient client, final long requestId, final long length)
    {
        new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved().opcode(Opcode.WRITE).requestId(requestId)
            .segmentHandle(client.session.segmentHandle()).localAddress(0x1000).targetAddress(0x2000).length(length)
            .traceId(requestId).submitNanos(1).noNotify();
        assertThat(client.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.recordLength(0)))
            .isTrue();
    }

    private void submitBatch(final TestClient client, final long requestId, final int entries)
    {
        submitBatch(client, requestId, entries, 64);
    }

    private void submitBatch(final TestClient client, final long requestId, final int entries, final long length)
    {
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(requestId, Opcode.WRITE, entries, client.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < entries; i++)
        {
            batch.entry(i, 0x1000 + i * length, 0x2000 + i * length, length);
        }
        assertThat(client.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(entries, 0))).isTrue();
    }

    /**
     * Take every request published (each member of a command's local run), as a transfer worker would, giving back
     * intake's borrow of the submitter.
     */
    private List<Published> drain()
    {
        return drain(new int[1]);
    }

    /**
     * @param commands counts the pipeline commands taken (in its first element).
     */
    private List<Published> drain(final int[] commands)
    {
        final List<Published> taken = new ArrayList<>();
        try
        {
            pipeline.workerPoller(0).poll((command, sequence, endOfBatch) ->
            {
                if (command.submitter != null)
                {
                    commands[0]++;
                    final LocalRun run = command.run;
                    if (run.count() == 0)
                    {
                        taken.add(new Published(command.submitter.segmentName(), command.requestId,
                            command.batch == null ? -1 : command.batchEntry));
                    }
                    for (int i = 0; i < run.count(); i++)
                    {
                        taken.add(new Published(command.submitter.segmentName(), run.requestId(i),
                            run.batch(i) == null ? -1 : run.batchEntry(i)));
                    }
                    command.submitter.release();
                }
                command.clear();
                return true;
            });
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
        return taken;
    }

    private static long countOf(final List<Published> published, final String client)
    {
        return published.stream().filter(p -> p.client.equals(client)).count();
    }

    @Test
    void shouldTakeFromEveryClientInTurnSoThatABusyOneCannotStarveAnother()
    {
        start(1024);
        for (int i = 0; i < 100; i++)
        {
            submit(alice, i);
        }
        submit(bob, 1000);
        submit(bob, 1001);

        intake.doWork();
        final List<Published> first = drain();

        assertThat(countOf(first, "alice")).as("alice gets her share per cycle, no more")
            .isEqualTo(SubmitAdapter.RECORDS_PER_CLIENT);
        assertThat(first).as("bob is served in the same cycle")
            .contains(new Published("bob", 1000, -1), new Published("bob", 1001, -1));

        for (int i = 0; i < 10; i++)
        {
            intake.doWork();
        }
        final List<Published> rest = drain();
        assertThat(rest).hasSize(100 - SubmitAdapter.RECORDS_PER_CLIENT);
        assertThat(rest.stream().mapToLong(Published::requestId)).as("a client's requests stay in its order")
            .isSorted();
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(102);
    }

    /**
     * Intake scans only up to the highest slot in use (an idle cycle is what a new record waits out); clients that
     * come and go in any slot, the highest included, are all served, in turn.
     */
    @Test
    void shouldServeClientsInWhicheverSlotsTheyComeAndGo()
    {
        start(1024);
        final TestClient carol = new TestClient(3, "carol", 64 * 1024);
        registry.add(carol.session);
        submit(carol, 30);
        intake.doWork();
        assertThat(drain()).as("the highest slot").containsExactly(new Published("carol", 30, -1));

        registry.remove(carol.session);
        registry.remove(bob.session);
        submit(alice, 1);
        intake.doWork();
        assertThat(drain()).as("the lowest slot, once the others left").containsExactly(new Published("alice", 1, -1));

        final TestClient dave = new TestClient(2, "dave", 64 * 1024);
        registry.add(dave.session);
        for (int i = 0; i < 2 * SubmitAdapter.RECORDS_PER_CLIENT; i++)
        {
            submit(alice, 100 + i);
            submit(dave, 200 + i);
        }
        intake.doWork();
        final List<Published> cycle = drain();
        assertThat(countOf(cycle, "alice")).as("both served in the same cycle")
            .isEqualTo(SubmitAdapter.RECORDS_PER_CLIENT);
        assertThat(countOf(cycle, "dave")).isEqualTo(SubmitAdapter.RECORDS_PER_CLIENT);
    }

    @Test
    void shouldCutOffOnlyTheAuthorOfAMalformedRecord()
    {
        start(1024);
        submit(alice, 1);
        scratch.putLong(0, 0L);
        assertThat(alice.submitter.write(99, scratch, 0, 8)).isTrue(); // no such record type
        submit(alice, 2);
        submit(bob, 10);
        submit(bob, 11);

        intake.doWork();

        assertThat(drain()).as("what alice wrote before the garbage counts; nothing after it")
            .containsExactlyInAnyOrder(new Published("alice", 1, -1), new Published("bob", 10, -1),
                new Published("bob", 11, -1));
        assertThat(disconnects.poll()).isSameAs(alice.session);
        assertThat(disconnects.poll()).isNull();
        assertThat(alice.session.protocolViolation()).contains("submit ring");
        assertThat(counters.get(SystemCounter.MALFORMED_RECORDS).get()).isEqualTo(1);

        submit(bob, 12);
        intake.doWork();
        intake.doWork();
        assertThat(drain()).containsExactly(new Published("bob", 12, -1));
        assertThat(bob.session.protocolViolation()).isNull();
    }

    @Test
    void shouldCutOffAClientWhoseRecordLengthDisagreesWithItsOwnFields()
    {
        start(1024);
        new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved().opcode(Opcode.WRITE).requestId(5)
            .segmentHandle(alice.session.segmentHandle()).length(64).putNotify(new byte[8], 0, 8);
        // the notify says 8 bytes, the record carries none of them
        assertThat(alice.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.HEADER_LENGTH)).isTrue();

        intake.doWork();

        assertThat(drain()).isEmpty();
        assertThat(disconnects.poll()).isSameAs(alice.session);
        assertThat(alice.session.submitRing().isBroken()).isTrue();
    }

    @Test
    void shouldLeaveRecordsInTheRingWhileThePipelineIsFull()
    {
        start(8);
        for (int i = 0; i < 12; i++)
        {
            submit(alice, i, ALONE);
        }

        intake.doWork();
        intake.doWork();

        assertThat(alice.session.submitRing().hasBacklog()).as("what did not fit waits in the client's ring").isTrue();
        assertThat(counters.get(SystemCounter.PIPELINE_BACKPRESSURE).get()).isPositive();
        final List<Published> first = drain();
        assertThat(first).hasSize(8);

        intake.doWork();
        final List<Published> second = drain();
        assertThat(second).hasSize(4);
        final List<Published> all = new ArrayList<>(first);
        all.addAll(second);
        assertThat(all.stream().mapToLong(Published::requestId)).as("nothing lost, nothing twice, in order")
            .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L);
        assertThat(alice.session.submitRing().hasBacklog()).isFalse();
        assertThat(disconnects.poll()).isNull();
    }

    @Test
    void shouldPublishABatchLargerThanTheRoomLeftOverSeveralCycles()
    {
        start(8);
        submitBatch(alice, 77, 20, ALONE);

        final List<Published> all = new ArrayList<>();
        for (int cycle = 0; cycle < 10 && all.size() < 20; cycle++)
        {
            intake.doWork();
            all.addAll(drain());
        }

        assertThat(all).hasSize(20);
        assertThat(all).allMatch(p -> p.requestId == 77 && p.client.equals("alice"));
        assertThat(all.stream().mapToInt(Published::batchEntry)).containsExactly(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
        assertThat(alice.session.submitRing().hasBacklog()).isFalse();
    }

    @Test
    void shouldSkipAClientBeingClosedAndLeaveItsRingAlone()
    {
        start(1024);
        submit(alice, 1);
        submit(bob, 2);
        alice.session.markClosed(); // the conductor is freeing it: its rings may be unmapped any moment

        intake.doWork();

        assertThat(drain()).containsExactly(new Published("bob", 2, -1));
        assertThat(alice.session.isReclaimable()).as("intake let go of it").isTrue();
    }

    @Test
    void shouldTellTheDoorbellsThatABatchWaitsInItsRingForABatchTrackerToComeBack()
    {
        start(64);
        for (int i = 0; i < 4; i++)
        {
            submitBatch(alice, 100 + i, 1); // four trackers, all out until their batches complete
        }
        intake.doWork();
        assertThat(drain()).hasSize(4);
        assertThat(intake.waitsForBatchTracker()).as("every batch had a tracker").isFalse();

        submitBatch(alice, 104, 1);
        intake.doWork();
        assertThat(drain()).as("the fifth batch stays in its ring").isEmpty();
        // its tracker comes back with a completion that may ring no doorbell: intake must not sleep on them now
        assertThat(intake.waitsForBatchTracker()).isTrue();
    }

    @Test
    void shouldCountTheEntriesAClosedClientsHalfPublishedBatchNeverRanAsFailed()
    {
        start(8);
        submitBatch(alice, 200, 12, ALONE); // each entry a command of its own: 8 fit, 4 wait for room
        intake.doWork();
        assertThat(drain()).hasSize(8);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).as("counted with the batch").isEqualTo(12);

        alice.session.markClosed(); // before intake publishes the rest
        intake.doWork();

        assertThat(drain()).isEmpty();
        // so that submitted = completed + failed holds once the 8 published ones end: intake sleeps only then
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(4);
    }

    @Test
    void shouldSettleTheHalfPublishedBatchOfAClientThatLeftTheHighestSlot()
    {
        start(8);
        submitBatch(bob, 300, 12, ALONE); // bob holds the highest slot in use
        intake.doWork();
        assertThat(drain()).hasSize(8);

        bob.session.markClosed();
        registry.remove(bob.session); // intake's rounds no longer reach his slot
        intake.doWork();

        assertThat(drain()).isEmpty();
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(4);
    }
}
