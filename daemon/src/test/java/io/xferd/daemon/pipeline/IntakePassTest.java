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
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One intake pass and one worker pass, single-threaded, over real memory: what intake takes from a client's ring in
 * one pass reaches the workers together and exactly once, the submitted counter moves with it, a bad request in the
 * middle of a pass fails alone, and the clock is read once per pass on each side, not once per request.
 */
@Timeout(10)
class IntakePassTest
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x20_0000L;
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 32;

    private final Arena arena = Arena.ofShared();
    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SystemCounters counters = new SystemCounters(countersManager);
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
    private final SessionTable registry = new SessionTable(4);
    private final TransferPipeline pipeline = new TransferPipeline(256, 1);
    /** Counts its reads; each read is 1,000 ns after the one before. */
    private final CountingClock clock = new CountingClock();
    private final TestClient alice = new TestClient(0, "alice", 64 * 1024);
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
    private final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters, clock,
        TransferJournal.DISABLED, 64, 4);
    private final TransferWorker worker = new TransferWorker(0, pipeline, registry,
        new CompletionSender(disconnects, counters), null, counters, clock, 1 << 20, Long.MAX_VALUE,
        TransferJournal.DISABLED, new RegionCopierTest.RecordingDeviceMemory(), AccessPolicy.OWNER_ONLY);
    private MemorySegment source;
    private MemorySegment target;

    private static final class CountingClock implements NanoClock
    {
        int reads;

        @Override
        public long nanoTime()
        {
            reads++;
            return reads * 1_000L;
        }
    }

    IntakePassTest()
    {
        source = arena.allocate((long)BLOCK * BLOCKS);
        target = arena.allocate((long)BLOCK * BLOCKS);
        for (int i = 0; i < BLOCKS; i++)
        {
            source.asSlice((long)i * BLOCK, BLOCK).fill((byte)(i + 1));
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

    private void submit(final long requestId, final int block, final long segmentHandle, final long length)
    {
        new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved().opcode(Opcode.WRITE).requestId(requestId)
            .segmentHandle(segmentHandle).localAddress(LOCAL + (long)block * BLOCK)
            .targetAddress(TARGET + (long)block * BLOCK).length(length).traceId(requestId).submitNanos(1).noNotify();
        assertThat(alice.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.recordLength(0)))
            .isTrue();
    }

    private long submitted()
    {
        return counters.get(SystemCounter.REQUESTS_SUBMITTED).get();
    }

    @Test
    void shouldPublishExactlyTheRecordsPresentAndCountThemInOnePass()
    {
        for (int i = 0; i < 5; i++)
        {
            submit(i, i, alice.session.segmentHandle(), BLOCK);
        }

        assertThat(intake.doWork()).isEqualTo(5);
        assertThat(pipeline.ring().getCursor()).as("the five small local requests ride in one command").isZero();
        assertThat(submitted()).isEqualTo(5);

        assertThat(intake.doWork()).as("nothing new in the ring").isZero();
        assertThat(pipeline.ring().getCursor()).isZero();
        assertThat(submitted()).isEqualTo(5);

        submit(5, 5, alice.session.segmentHandle(), BLOCK);
        submit(6, 6, alice.session.segmentHandle(), BLOCK);
        assertThat(intake.doWork()).isEqualTo(2);
        assertThat(pipeline.ring().getCursor()).as("a pass's run ends with the pass").isEqualTo(1);
        assertThat(submitted()).isEqualTo(7);

        worker.doWork();
        assertThat(alice.completions()).extracting(TestClient.Completion::requestId)
            .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
        for (int i = 0; i < 7; i++)
        {
            assertThat(target.get(ValueLayout.JAVA_BYTE, (long)i * BLOCK + BLOCK - 1)).isEqualTo((byte)(i + 1));
        }
    }

    @Test
    void shouldFailOnlyTheBadRequestInTheMiddleOfAPassAndCompleteTheRest()
    {
        for (int i = 0; i < 9; i++)
        {
            if (i == 3)
            {
                submit(i, i, alice.session.segmentHandle(), 0); // well framed, no length
            }
            else if (i == 5)
            {
                submit(i, i, alice.session.segmentHandle() + 12345, BLOCK); // a segment nobody has
            }
            else
            {
                submit(i, i, alice.session.segmentHandle(), BLOCK);
            }
        }

        intake.doWork();
        worker.doWork();

        final List<TestClient.Completion> completions = alice.completions();
        assertThat(completions).hasSize(9);
        for (final TestClient.Completion completion : completions)
        {
            final int expected = completion.requestId() == 3 ? TransferStatus.INVALID_LENGTH :
                completion.requestId() == 5 ? TransferStatus.UNKNOWN_SEGMENT : TransferStatus.OK;
            assertThat(completion.status()).as("request " + completion.requestId()).isEqualTo(expected);
            final int block = (int)completion.requestId();
            assertThat(target.get(ValueLayout.JAVA_BYTE, (long)block * BLOCK))
                .as("block " + block).isEqualTo(expected == TransferStatus.OK ? (byte)(block + 1) : (byte)0);
        }
        assertThat(disconnects.isEmpty()).as("a bad request is a status, not a disconnect").isTrue();
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(7);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(2);
    }

    @Test
    void shouldStillHandOnTheRequestsTakenBeforeAMalformedRecordInTheSamePass()
    {
        submit(1, 1, alice.session.segmentHandle(), BLOCK);
        submit(2, 2, alice.session.segmentHandle(), BLOCK);
        scratch.putLong(0, 0L);
        assertThat(alice.submitter.write(RecordTypes.SUBMIT, scratch, 0, 8)).isTrue(); // too short for a SUBMIT
        submit(4, 4, alice.session.segmentHandle(), BLOCK);

        intake.doWork();
        assertThat(disconnects.poll()).as("the author of the malformed record is cut off").isSameAs(alice.session);
        assertThat(pipeline.ring().getCursor()).as("the two before it were published (one run), nothing after")
            .isZero();

        worker.doWork();
        assertThat(alice.completions()).containsExactly(
            new TestClient.Completion(1, TransferStatus.OK, BLOCK), new TestClient.Completion(2, TransferStatus.OK, BLOCK));
    }

    @Test
    void shouldReadTheClockOncePerPassOnEachSideForSmallRequests()
    {
        for (int i = 0; i < 8; i++)
        {
            submit(i, i, alice.session.segmentHandle(), BLOCK);
        }

        intake.doWork();
        assertThat(clock.reads).as("intake: one read for the whole pass").isEqualTo(1);
        worker.doWork();
        assertThat(clock.reads).as("worker: one read for 8 x 4 KiB (under the refresh threshold)").isEqualTo(2);

        final List<Long> times = alice.completionTimes();
        assertThat(times).hasSize(8).containsOnly(2_000L);
    }

    @Test
    void shouldReadTheClockAgainOnceEnoughBytesWereCopiedSinceTheLastRead()
    {
        final int perRead = (int)(TransferWorker.CLOCK_REFRESH_BYTES / BLOCK);
        for (int i = 0; i < BLOCKS; i++)
        {
            submit(i, i, alice.session.segmentHandle(), BLOCK);
        }

        intake.doWork(); // 16 records per client per pass: the first 16
        intake.doWork();
        final int intakeReads = clock.reads;
        worker.doWork();

        final List<Long> times = alice.completionTimes();
        assertThat(times).hasSize(BLOCKS).isSorted();
        // the first request reads, then every perRead requests' bytes read again
        assertThat(clock.reads - intakeReads).isEqualTo(1 + (BLOCKS - 1) / perRead);
        assertThat(times.get(0)).isLessThan(times.get(BLOCKS - 1));
    }

    @Test
    void shouldLendEveryCommandOfAPassItsOwnBorrowOfTheClientAndGetEachBack()
    {
        for (int i = 0; i < 5; i++)
        {
            submit(i, i, alice.session.segmentHandle(), BLOCK);
        }
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(100, Opcode.WRITE, 3, alice.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < 3; i++)
        {
            batch.entry(i, LOCAL + (long)(10 + i) * BLOCK, TARGET + (long)(10 + i) * BLOCK, BLOCK);
        }
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0, SubmitBatchFlyweight.bodyLength(3, 0)))
            .isTrue();

        intake.doWork();
        alice.session.markClosed(); // the client goes: what was published still holds it
        assertThat(alice.session.isReclaimable()).as("the pass's command (one local run of eight) borrows it")
            .isFalse();

        worker.doWork();
        assertThat(alice.completions()).extracting(TestClient.Completion::requestId)
            .containsExactly(0L, 1L, 2L, 3L, 4L, 100L);
        assertThat(alice.session.isReclaimable()).as("every borrow given back").isTrue();
        assertThat(submitted()).isEqualTo(8);
    }
}
