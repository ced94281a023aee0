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
 * the pipeline after it. Real memory, single-threaded.
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
    private final TransferJournal journal = new TransferJournal()
    {
        @Override
        public void onSubmitted(final int clientSlot, final long requestId, final long traceId, final int opcode,
            final long length, final long submitNanos, final long intakeNanos)
        {
            journaled.add("SUBMITTED " + requestId);
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
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(requestId, Opcode.WRITE, entries, alice.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < entries; i++)
        {
            batch.entry(i, LOCAL + (long)(2 + i) * BLOCK, TARGET + (long)(2 + i) * BLOCK, BLOCK);
        }
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(entries, 0))).isTrue();
    }

    private static byte[] slice(final MemorySegment memory, final int block)
    {
        return memory.asSlice((long)block * BLOCK, BLOCK).toArray(ValueLayout.JAVA_BYTE);
    }
}
