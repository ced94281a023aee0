package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.AccessPolicy;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With SHARED threading intake runs a lone small local request on the worker that shares its thread, without the
 * pipeline hop: the bytes land, the completion and counters are those of the pipeline path (the journal has its
 * COMPLETED record, which carries its submit and intake times, and no SUBMITTED record), a bad
 * request gets its typed status, and nothing overtakes an earlier request of the client (a request that is not alone
 * in its pass, or that finds the pipeline busy, goes through the pipeline as before). A batch whose pass finds the
 * pipeline empty runs inline too, its entries as one local run (one SUBMITTED and one COMPLETED record, each entry
 * checked and counted, the batch's status that of its lowest failed entry), ahead of whatever its pass sends through
 * the pipeline after it, and a batch split between its inline run and the pipeline is answered once. What one intake
 * cycle runs inline, every client's together, stops at the worker's byte budget. Real memory, single-threaded.
 */
@Timeout(10)
class InlineTransferTest
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x40_0000L;
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 16;

    private final Arena arena = Arena.ofShared();
    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SystemCounters counters = new SystemCounters(countersManager);
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
    private final SessionTable registry = new SessionTable(4);
    private final TransferPipeline pipeline = new TransferPipeline(256, 1);
    private final TestClient alice = new TestClient(0, "alice", 256 * 1024);
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(8192));
    private final List<String> journaled = new ArrayList<>();
    /** Run by the journal after each SUBMITTED record: a way into the middle of intake's pass. */
    private Runnable onSubmitted = () -> {};
    private final TransferJournal journal = new TransferJournal()
    {
        @Override
        public void onSubmitted(final int clientSlot, final long requestId, final long traceId, final int opcode,
            final long length, final long submitNanos, final long intakeNanos)
        {
            journaled.add("SUBMITTED " + requestId);
            onSubmitted.run();
        }

        @Override
        public void onCompleted(final int clientSlot, final long requestId, final long traceId, final int opcode,
            final int status, final long length, final long bytes, final int peerId, final int nicId,
            final long submitNanos, final long intakeNanos, final long completeNanos)
        {
            journaled.add("COMPLETED " + requestId + " " + status + " " + bytes);
        }
    };
    private final TransferWorker worker = new TransferWorker(0, pipeline, registry,
        new CompletionSender(disconnects, counters), null, counters, SystemNanoClock.INSTANCE, 1 << 20,
        Long.MAX_VALUE, journal, new RegionCopierTest.RecordingDeviceMemory(), AccessPolicy.OWNER_ONLY);
    private final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
        SystemNanoClock.INSTANCE, journal, 64, 4, 0, worker);
    private final MemorySegment source = arena.allocate((long)BLOCK * BLOCKS);
    private final MemorySegment target = arena.allocate((long)BLOCK * BLOCKS);

    InlineTransferTest()
    {
        final SplittableRandom random = new SplittableRandom(17);
        for (long i = 0; i < source.byteSize(); i++)
        {
            source.set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
        }
        alice.regions(new Region(LOCAL, source.byteSize(), "cpu:0", source, source),
            new Region(TARGET, target.byteSize(), "cpu:0", target, target));
        registry.add(alice.session);
    }

    @AfterEach
    void close()
    {
        arena.close();
    }

    @Test
    void shouldRunALoneSmallRequestInIntakesPassWithoutThePipeline()
    {
        submit(Opcode.WRITE, 7, LOCAL + BLOCK, TARGET + 3 * BLOCK, 64);

        intake.doWork();

        assertThat(pipeline.ring().getCursor()).as("nothing published").isEqualTo(-1);
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(7, TransferStatus.OK, 64));
        assertThat(target.asSlice(3 * BLOCK, 64).toArray(ValueLayout.JAVA_BYTE))
            .isEqualTo(source.asSlice(BLOCK, 64).toArray(ValueLayout.JAVA_BYTE));
        assertThat(journaled).as("one record: it waited nowhere").containsExactly("COMPLETED 7 0 64");
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(1);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(1);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(64);
        worker.doWork(); // the composite cycle's worker turn
        alice.session.markClosed();
        assertThat(alice.session.isReclaimable()).as("no borrow of the client left behind").isTrue();
    }

    @Test
    void shouldReadInlineToo()
    {
        target.asSlice(5 * BLOCK, BLOCK).fill((byte)42);

        submit(Opcode.READ, 1, LOCAL, TARGET + 5 * BLOCK, BLOCK);
        intake.doWork();

        assertThat(alice.completions()).containsExactly(new TestClient.Completion(1, TransferStatus.OK, BLOCK));
        assertThat(source.asSlice(0, BLOCK).toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte)42);
        assertThat(counters.get(SystemCounter.BYTES_READ).get()).isEqualTo(BLOCK);
    }

    @Test
    void shouldFailABadLoneRequestInlineWithItsTypedStatus()
    {
        final long[][] requests = {
            {2, LOCAL, TARGET + (long)BLOCKS * BLOCK, 64}, // past the target region
            {3, LOCAL + (long)BLOCKS * BLOCK, TARGET, 64}, // past the local region
            {4, LOCAL, TARGET, LocalRun.MAX_MEMBER_LENGTH + 1}, // too long to run inline (and for the region)
        };
        for (final long[] r : requests)
        {
            submit(Opcode.WRITE, r[0], r[1], r[2], r[3]); // each alone in its pass
            intake.doWork();
            worker.doWork();
        }

        assertThat(alice.completions()).containsExactly(
            new TestClient.Completion(2, TransferStatus.TARGET_RANGE_NOT_REGISTERED, 0),
            new TestClient.Completion(3, TransferStatus.LOCAL_RANGE_NOT_REGISTERED, 0),
            new TestClient.Completion(4, TransferStatus.LOCAL_RANGE_NOT_REGISTERED, 0));
        assertThat(pipeline.ring().getCursor()).as("only the long one crossed the pipeline").isZero();
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(3);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(3);
    }

    @Test
    void shouldSendARequestThatIsNotAloneInItsPassThroughThePipelineInOrder()
    {
        submit(Opcode.WRITE, 0, LOCAL, TARGET, BLOCK);
        submit(Opcode.WRITE, 1, LOCAL + BLOCK, TARGET + BLOCK, BLOCK);
        submitBatch(2, 2);

        intake.doWork();
        assertThat(alice.completions()).as("nothing ran inline").isEmpty();
        worker.doWork();

        final List<TestClient.Completion> completions = alice.completions(); // reads them off the ring
        assertThat(completions).extracting(TestClient.Completion::requestId).containsExactly(0L, 1L, 2L);
        assertThat(completions).extracting(TestClient.Completion::status).containsOnly(TransferStatus.OK);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(4);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(4);
        assertThat(slice(target, 1)).isEqualTo(slice(source, 1));
    }

    @Test
    void shouldNotOvertakeARequestStillInThePipeline()
    {
        submit(Opcode.WRITE, 0, LOCAL, TARGET, BLOCK);
        submit(Opcode.WRITE, 1, LOCAL + BLOCK, TARGET + BLOCK, BLOCK);
        intake.doWork(); // one pass: the first is held, the second sends it to the pipeline ahead of itself
        submit(Opcode.WRITE, 2, LOCAL + BLOCK, TARGET + BLOCK, 64);
        intake.doWork(); // the pipeline still holds 0 and 1: 2 goes behind them

        assertThat(alice.completions()).isEmpty();
        worker.doWork();
        assertThat(alice.completions()).extracting(TestClient.Completion::requestId).containsExactly(0L, 1L, 2L);
    }

    @Test
    void shouldRunABatchAloneInItsPassInlineAsOneRun()
    {
        submitBatch(5, 4);

        intake.doWork();

        assertThat(pipeline.ring().getCursor()).as("nothing published").isEqualTo(-1);
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(5, TransferStatus.OK, 4 * BLOCK));
        for (int block = 2; block < 6; block++)
        {
            assertThat(slice(target, block)).isEqualTo(slice(source, block));
        }
        assertThat(journaled).as("the run's pair for its entries").containsExactly("SUBMITTED 5",
            "COMPLETED 5 0 " + 4 * BLOCK);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(4);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(4);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(4 * BLOCK);
        worker.doWork();
        alice.session.markClosed();
        assertThat(alice.session.isReclaimable()).as("no borrow of the client left behind").isTrue();
    }

    @Test
    void shouldRunABatchOfOneEntryInlineWithItsCompletedRecordAlone()
    {
        submitBatch(6, 1);

        intake.doWork();

        assertThat(pipeline.ring().getCursor()).isEqualTo(-1);
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(6, TransferStatus.OK, BLOCK));
        assertThat(slice(target, 2)).isEqualTo(slice(source, 2));
        assertThat(journaled).as("it waited nowhere").containsExactly("COMPLETED 6 0 " + BLOCK);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(1);
    }

    @Test
    void shouldGiveABatchRunInlineTheStatusOfItsLowestFailedEntryAndCountEachEntry()
    {
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(8, Opcode.WRITE, 4, alice.session.segmentHandle(), 0, 1, null, 0, 0)
            .entry(0, LOCAL, TARGET, BLOCK)
            .entry(1, LOCAL + BLOCK, TARGET + (long)BLOCKS * BLOCK, BLOCK) // past the target region
            .entry(2, LOCAL + 2 * BLOCK, TARGET + 2 * BLOCK, BLOCK)
            .entry(3, LOCAL + (long)BLOCKS * BLOCK, TARGET + 3 * BLOCK, BLOCK); // past the local region
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0, SubmitBatchFlyweight.bodyLength(4, 0)))
            .isTrue();

        intake.doWork();

        assertThat(pipeline.ring().getCursor()).isEqualTo(-1);
        assertThat(alice.completions()).extracting(TestClient.Completion::requestId, TestClient.Completion::status)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(8L, TransferStatus.TARGET_RANGE_NOT_REGISTERED));
        assertThat(slice(target, 0)).isEqualTo(slice(source, 0));
        assertThat(slice(target, 2)).isEqualTo(slice(source, 2));
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(2);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(2);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(2 * BLOCK);
    }

    @Test
    void shouldRunABatchInlineAheadOfWhatItsPassSendsThroughThePipelineAfterIt()
    {
        submitBatch(2, 2);
        submit(Opcode.WRITE, 3, LOCAL, TARGET, LocalRun.MAX_MEMBER_LENGTH + 1); // too long to ride in its run

        intake.doWork();
        assertThat(alice.completions()).as("the batch ran inline, the long one is in the pipeline")
            .containsExactly(new TestClient.Completion(2, TransferStatus.OK, 2 * BLOCK));
        assertThat(pipeline.ring().getCursor()).isZero();
        worker.doWork();

        assertThat(alice.completions()).extracting(TestClient.Completion::requestId).containsExactly(3L);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(3);
    }

    @Test
    void shouldNotRunABatchInlineAheadOfARequestStillInThePipeline()
    {
        submit(Opcode.WRITE, 0, LOCAL, TARGET, BLOCK);
        submit(Opcode.WRITE, 1, LOCAL + BLOCK, TARGET + BLOCK, BLOCK);
        intake.doWork(); // both go to the pipeline
        submitBatch(2, 3);
        intake.doWork(); // the pipeline still holds 0 and 1: the batch goes behind them

        assertThat(alice.completions()).isEmpty();
        worker.doWork();
        assertThat(alice.completions()).extracting(TestClient.Completion::requestId).containsExactly(0L, 1L, 2L);
    }

    @Test
    void shouldAnswerABatchSplitBetweenItsInlineRunAndThePipelineOnceWithTheStatusOfItsFailedEntry()
    {
        // entry 1 is too long to ride in a run (and for the region): it and entry 2 cross the pipeline, entry 0 inline
        submitBatch(alice, 4, BLOCK, LocalRun.MAX_MEMBER_LENGTH + 1, BLOCK);

        intake.doWork();
        assertThat(alice.completions()).as("entry 0 ran inline, but its batch waits for the other two").isEmpty();
        assertThat(pipeline.ring().getCursor()).isOne();
        assertThat(slice(target, 2)).isEqualTo(slice(source, 2));
        worker.doWork();

        assertThat(alice.completions()).extracting(TestClient.Completion::requestId, TestClient.Completion::status)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(4L, TransferStatus.LOCAL_RANGE_NOT_REGISTERED));
        assertThat(slice(target, 4)).isEqualTo(slice(source, 4));
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(3);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(2);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(1);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(2 * BLOCK);
        alice.session.markClosed();
        assertThat(alice.session.isReclaimable()).as("no borrow of the client left behind").isTrue();
    }

    @Test
    void shouldSendWhatFollowsAFullInlineRunThroughThePipelineAfterIt()
    {
        final int entries = LocalRun.MAX_MEMBERS;
        final long entryLength = (long)BLOCK * BLOCKS / entries;
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(1, Opcode.WRITE, entries, alice.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < entries; i++)
        {
            batch.entry(i, LOCAL + i * entryLength, TARGET + i * entryLength, entryLength);
        }
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(entries, 0))).isTrue();
        submit(Opcode.WRITE, 2, LOCAL, TARGET, 64); // would ride in the run, but it is full

        intake.doWork();
        assertThat(alice.completions()).as("the batch filled its run and ran inline")
            .containsExactly(new TestClient.Completion(1, TransferStatus.OK, (long)BLOCK * BLOCKS));
        assertThat(target.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(source.toArray(ValueLayout.JAVA_BYTE));
        assertThat(pipeline.ring().getCursor()).as("the SUBMIT crossed the pipeline").isZero();
        worker.doWork();

        assertThat(alice.completions()).containsExactly(new TestClient.Completion(2, TransferStatus.OK, 64));
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(entries + 1);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(entries + 1);
    }

    @Test
    void shouldLetASmallSubmitRideInABatchsInlineRunAndAnswerEachOnItsOwn()
    {
        submitBatch(2, 2);
        submit(Opcode.WRITE, 3, LOCAL + 8 * BLOCK, TARGET + 8 * BLOCK, 64);

        intake.doWork();

        assertThat(pipeline.ring().getCursor()).as("nothing published").isEqualTo(-1);
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(2, TransferStatus.OK, 2 * BLOCK),
            new TestClient.Completion(3, TransferStatus.OK, 64));
        assertThat(target.asSlice(8 * BLOCK, 64).toArray(ValueLayout.JAVA_BYTE))
            .isEqualTo(source.asSlice(8 * BLOCK, 64).toArray(ValueLayout.JAVA_BYTE));
        assertThat(journaled).as("the batch's pair, then the SUBMIT's").containsExactly("SUBMITTED 2",
            "COMPLETED 2 0 " + 2 * BLOCK, "SUBMITTED 3", "COMPLETED 3 0 64");
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(3);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(3);
        worker.doWork();
        alice.session.markClosed();
        assertThat(alice.session.isReclaimable()).isTrue();
    }

    @Test
    void shouldAccountForEveryEntryWhenTheClientClosesDuringAPassWithAHeldRun()
    {
        // entry 0 is held to run inline; entries 1 and 2 are claimed; the client closes while the pass reads them
        onSubmitted = alice.session::markClosed; // at entry 1's SUBMITTED record, written when it is claimed
        submitBatch(alice, 4, BLOCK, LocalRun.MAX_MEMBER_LENGTH + 1, BLOCK);

        intake.doWork();
        worker.doWork();

        final long submitted = counters.get(SystemCounter.REQUESTS_SUBMITTED).get();
        final long completed = counters.get(SystemCounter.REQUESTS_COMPLETED).get();
        final long failed = counters.get(SystemCounter.REQUESTS_FAILED).get();
        assertThat(submitted).isEqualTo(3);
        assertThat(completed + failed).as("submitted = completed + failed").isEqualTo(submitted);
        assertThat(failed).as("the claimed entries went out empty and count failed").isGreaterThanOrEqualTo(2);
        assertThat(alice.session.isReclaimable()).as("no borrow of the client left behind").isTrue();
    }

    @Test
    void shouldRunABatchInlineInEachOfTwoPassesInARow()
    {
        submitBatch(2, 2);
        intake.doWork();
        submitBatch(3, 3);
        intake.doWork();

        assertThat(pipeline.ring().getCursor()).as("nothing published").isEqualTo(-1);
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(2, TransferStatus.OK, 2 * BLOCK),
            new TestClient.Completion(3, TransferStatus.OK, 3 * BLOCK));
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(5);
    }

    @Test
    void shouldStopRunningBatchesInlineOnceTheCycleSpentTheWorkersByteBudget()
    {
        final TestClient bob = client(1, "bob");
        final TestClient carol = client(2, "carol");
        final TestClient dave = client(3, "dave");
        final TestClient[] clients = {alice, bob, carol, dave};
        final TransferWorker budgeted = budgetedWorker(2 * 4 * BLOCK); // two of the four batches
        final SubmitAdapter sharedIntake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
            SystemNanoClock.INSTANCE, journal, 64, 4, 0, budgeted);
        for (int i = 0; i < clients.length; i++)
        {
            submitBatch(clients[i], 10 + i, 4);
        }

        sharedIntake.doWork(); // alice first, then bob: they spend the budget

        assertThat(alice.completions()).extracting(TestClient.Completion::requestId).containsExactly(10L);
        assertThat(bob.completions()).extracting(TestClient.Completion::requestId).containsExactly(11L);
        assertThat(carol.completions()).as("over the budget: through the pipeline").isEmpty();
        assertThat(dave.completions()).isEmpty();
        assertThat(pipeline.ring().getCursor()).as("carol's and dave's runs").isOne();
        budgeted.doWork();
        assertThat(carol.completions()).extracting(TestClient.Completion::requestId).containsExactly(12L);
        assertThat(dave.completions()).extracting(TestClient.Completion::requestId).containsExactly(13L);

        for (int i = 0; i < clients.length; i++)
        {
            submitBatch(clients[i], 20 + i, 4);
        }
        sharedIntake.doWork(); // a new cycle, a new budget
        int answeredInline = 0;
        for (final TestClient client : clients)
        {
            answeredInline += client.completions().size();
        }
        assertThat(answeredInline).isEqualTo(2);
        budgeted.doWork();
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(2 * 4 * 4);
    }

    @Test
    void shouldStopRunningLoneRequestsInlineOnceTheCycleSpentTheWorkersByteBudget()
    {
        final TestClient bob = client(1, "bob");
        final TransferWorker budgeted = budgetedWorker(BLOCK);
        final SubmitAdapter sharedIntake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
            SystemNanoClock.INSTANCE, journal, 64, 4, 0, budgeted);
        submit(Opcode.WRITE, 1, LOCAL, TARGET, BLOCK);
        new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved().opcode(Opcode.WRITE).requestId(2)
            .segmentHandle(bob.session.segmentHandle()).localAddress(LOCAL).targetAddress(TARGET)
            .length(BLOCK).traceId(2).submitNanos(1).noNotify();
        assertThat(bob.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.recordLength(0)))
            .isTrue();

        sharedIntake.doWork();

        assertThat(alice.completions()).containsExactly(new TestClient.Completion(1, TransferStatus.OK, BLOCK));
        assertThat(bob.completions()).as("over the budget: through the pipeline").isEmpty();
        assertThat(pipeline.ring().getCursor()).isZero();
        budgeted.doWork();
        assertThat(bob.completions()).containsExactly(new TestClient.Completion(2, TransferStatus.OK, BLOCK));
    }

    @Test
    void shouldGoThroughThePipelineWithoutAWorkerOnIntakesThread()
    {
        final SubmitAdapter dedicated = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
            SystemNanoClock.INSTANCE, journal, 64, 4, 0, null);
        submit(Opcode.WRITE, 9, LOCAL, TARGET, 64);

        dedicated.doWork();
        assertThat(alice.completions()).isEmpty();
        assertThat(pipeline.ring().getCursor()).isZero();
        worker.doWork();
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(9, TransferStatus.OK, 64));
    }

    private TransferWorker budgetedWorker(final long byteBudget)
    {
        return new TransferWorker(0, pipeline, registry, new CompletionSender(disconnects, counters), null, counters,
            SystemNanoClock.INSTANCE, 1 << 20, byteBudget, journal, new RegionCopierTest.RecordingDeviceMemory(),
            AccessPolicy.OWNER_ONLY);
    }

    private void submit(final int opcode, final long requestId, final long local, final long targetAddress,
        final long length)
    {
        new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved().opcode(opcode).requestId(requestId)
            .segmentHandle(alice.session.segmentHandle()).localAddress(local).targetAddress(targetAddress)
            .length(length).traceId(requestId).submitNanos(1).noNotify();
        assertThat(alice.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.recordLength(0)))
            .isTrue();
    }

    private void submitBatch(final long requestId, final int entries)
    {
        submitBatch(alice, requestId, entries);
    }

    /**
     * A WRITE batch of {@code entries} blocks from block 2 on, each to the same block of the target.
     */
    private void submitBatch(final TestClient client, final long requestId, final int entries)
    {
        final long[] lengths = new long[entries];
        java.util.Arrays.fill(lengths, BLOCK);
        submitBatch(client, requestId, lengths);
    }

    /**
     * A WRITE batch with an entry of each length, entry {@code i} from block {@code 2 + i} to the same block.
     */
    private void submitBatch(final TestClient client, final long requestId, final long... lengths)
    {
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(requestId, Opcode.WRITE, lengths.length, client.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < lengths.length; i++)
        {
            batch.entry(i, LOCAL + (long)(2 + i) * BLOCK, TARGET + (long)(2 + i) * BLOCK, lengths[i]);
        }
        assertThat(client.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(lengths.length, 0))).isTrue();
    }

    /**
     * Another client in {@code slot} with memory of its own, registered.
     */
    private TestClient client(final int slot, final String name)
    {
        final TestClient client = new TestClient(slot, name, 256 * 1024);
        final MemorySegment from = arena.allocate((long)BLOCK * BLOCKS);
        final MemorySegment to = arena.allocate((long)BLOCK * BLOCKS);
        client.regions(new Region(LOCAL, from.byteSize(), "cpu:0", from, from),
            new Region(TARGET, to.byteSize(), "cpu:0", to, to));
        registry.add(client.session);
        return client;
    }

    private static byte[] slice(final MemorySegment memory, final int block)
    {
        return memory.asSlice((long)block * BLOCK, BLOCK).toArray(ValueLayout.JAVA_BYTE);
    }
}
