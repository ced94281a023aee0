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
 * Small local requests of one pass ride in one pipeline command (a local run) and are still checked, copied and
 * answered each on its own: a bad member fails alone with its own status, a batch's entries count into their batch
 * (one completion, the lowest failed entry's status), bytes land exactly where each member says, and a long request
 * goes alone. One intake pass and one worker pass over real memory, single-threaded.
 */
@Timeout(10)
class LocalRunTest
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x40_0000L;
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 64;

    private final Arena arena = Arena.ofShared();
    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SystemCounters counters = new SystemCounters(countersManager);
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
    private final SessionTable registry = new SessionTable(4);
    private final TransferPipeline pipeline = new TransferPipeline(256, 1);
    private final TestClient alice = new TestClient(0, "alice", 256 * 1024);
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(8192));
    private final RecordingJournal journal = new RecordingJournal();
    private final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
        SystemNanoClock.INSTANCE, journal, 64, 4);
    private final TransferWorker worker = new TransferWorker(0, pipeline, registry,
        new CompletionSender(disconnects, counters), null, counters, SystemNanoClock.INSTANCE, 1 << 20,
        Long.MAX_VALUE, journal, new RegionCopierTest.RecordingDeviceMemory(), AccessPolicy.OWNER_ONLY);

    /** The journal's records as "SUBMITTED id length" and "COMPLETED id status length bytes". */
    private static final class RecordingJournal implements TransferJournal
    {
        final List<String> records = new ArrayList<>();

        @Override
        public void onSubmitted(final int clientSlot, final long requestId, final long traceId, final int opcode,
            final long length, final long submitNanos, final long intakeNanos)
        {
            records.add("SUBMITTED " + requestId + " " + length);
        }

        @Override
        public void onCompleted(final int clientSlot, final long requestId, final long traceId, final int opcode,
            final int status, final long length, final long bytes, final int peerId, final int nicId,
            final long submitNanos, final long intakeNanos, final long completeNanos)
        {
            records.add("COMPLETED " + requestId + " " + status + " " + length + " " + bytes);
        }
    }
    private final MemorySegment source = arena.allocate((long)BLOCK * BLOCKS);
    private final MemorySegment target = arena.allocate((long)BLOCK * BLOCKS);

    LocalRunTest()
    {
        final SplittableRandom random = new SplittableRandom(16);
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
    void shouldCarryAPassOfSmallRequestsInOneCommandAndAnswerEachWithItsOwnBytes()
    {
        // scattered, not adjacent: block i goes to block (i * 7) % 16 of the target
        for (int i = 0; i < 16; i++)
        {
            submit(i, LOCAL + (long)i * BLOCK, TARGET + (long)((i * 7) % 16) * BLOCK, BLOCK);
        }

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("one pipeline command for the pass").isZero();
        worker.doWork();

        assertThat(alice.completions()).hasSize(16).allMatch(c -> c.status() == TransferStatus.OK && c.bytes() == BLOCK)
            .extracting(TestClient.Completion::requestId).containsExactly(
                0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L);
        for (int i = 0; i < 16; i++)
        {
            assertThat(slice(target, (i * 7) % 16)).as("block " + i).isEqualTo(slice(source, i));
        }
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(16);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(16L * BLOCK);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(16);
        alice.session.markClosed();
        assertThat(alice.session.isReclaimable()).as("the run's borrow of the client is given back").isTrue();
    }

    @Test
    void shouldFailOnlyTheMemberWhoseRangeIsNotRegisteredOrTooLong()
    {
        submit(0, LOCAL, TARGET, BLOCK);
        submit(1, LOCAL + BLOCK, TARGET + (long)BLOCKS * BLOCK - 16, BLOCK); // runs past the target's end
        submit(2, LOCAL - BLOCK, TARGET + 2 * BLOCK, BLOCK); // before the local region
        submit(3, LOCAL + 3 * BLOCK, TARGET + 3 * BLOCK, BLOCK);

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).isZero();
        worker.doWork();

        assertThat(alice.completions()).containsExactly(
            new TestClient.Completion(0, TransferStatus.OK, BLOCK),
            new TestClient.Completion(1, TransferStatus.TARGET_RANGE_NOT_REGISTERED, 0),
            new TestClient.Completion(2, TransferStatus.LOCAL_RANGE_NOT_REGISTERED, 0),
            new TestClient.Completion(3, TransferStatus.OK, BLOCK));
        assertThat(slice(target, 0)).isEqualTo(slice(source, 0));
        assertThat(slice(target, 3)).isEqualTo(slice(source, 3));
        assertThat(slice(target, 2)).as("nothing moved for the refused member").isEqualTo(new byte[BLOCK]);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(2);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(2);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(2L * BLOCK);
        assertThat(disconnects.isEmpty()).as("a bad request is a status, not a disconnect").isTrue();
    }

    @Test
    void shouldAnswerABatchOnceWithEveryEntryCopied()
    {
        submitBatch(7, 32, -1, -1);

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("32 entries, one command").isZero();
        worker.doWork();

        assertThat(alice.completions()).containsExactly(new TestClient.Completion(7, TransferStatus.OK, 32L * BLOCK));
        for (int i = 0; i < 32; i++)
        {
            assertThat(slice(target, 31 - i)).as("entry " + i).isEqualTo(slice(source, i));
        }
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(32);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(32);
    }

    @Test
    void shouldFailABatchWithItsLowestFailedEntryAndReportNoBytes()
    {
        submitBatch(8, 32, 20, 9); // entries 9 and 20 point outside the target region

        intake.doWork();
        worker.doWork();

        assertThat(alice.completions())
            .containsExactly(new TestClient.Completion(8, TransferStatus.TARGET_RANGE_NOT_REGISTERED, 0));
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(30);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(2);
    }

    @Test
    void shouldLandABatchsEntriesBeforeARegionClosedMidBatchAndFailTheOnesInIt()
    {
        // the target is two regions back to back; the second is unregistered (closed) after intake took the batch
        final long half = (long)BLOCKS / 2 * BLOCK;
        final Region first = new Region(TARGET, half, "cpu:0", target.asSlice(0, half), target);
        final Region second = new Region(TARGET + half, half, "cpu:0", target.asSlice(half, half), target);
        final Region local = new Region(LOCAL, source.byteSize(), "cpu:0", source, source);
        alice.regions(local, first, second);
        final int entries = 32;
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(5, Opcode.WRITE, entries, alice.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < entries; i++)
        {
            // entry i to block 16 + i: entries 0-15 in the first region, 16-31 in the second (adjacent: one span)
            batch.entry(i, LOCAL + (long)i * BLOCK, TARGET + (16L + i) * BLOCK, BLOCK);
        }
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(entries, 0))).isTrue();

        intake.doWork();
        alice.regions(local, first);
        second.markClosed();
        worker.doWork();

        assertThat(alice.completions()).as("the batch fails with its lowest failed entry's status, no bytes")
            .containsExactly(new TestClient.Completion(5, TransferStatus.TARGET_RANGE_NOT_REGISTERED, 0));
        for (int i = 0; i < entries; i++)
        {
            assertThat(slice(target, 16 + i)).as("block " + (16 + i))
                .isEqualTo(i < 16 ? slice(source, i) : new byte[BLOCK]);
        }
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(16);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(16);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(16L * BLOCK);
        assertThat(journal.records).containsExactly("SUBMITTED 5 " + entries * BLOCK,
            "COMPLETED 5 " + TransferStatus.TARGET_RANGE_NOT_REGISTERED + " " + entries * BLOCK + " " + 16 * BLOCK);
    }

    @Test
    void shouldCountABatchSplitOverTwoCommandsOnceWhenItsLastEntryLands()
    {
        // 64 entries: more than one run carries (its byte limit: 1 MiB of 4 KiB entries is 256; its member limit 64)
        // together with the SUBMIT ahead of it, so the batch's entries end in two commands
        submit(1, LOCAL, TARGET + 63L * BLOCK, BLOCK);
        submitBatch(9, 64, -1, -1);

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("two commands: the run is full after 64 members").isEqualTo(1);
        worker.doWork();

        assertThat(alice.completions()).containsExactly(new TestClient.Completion(1, TransferStatus.OK, BLOCK),
            new TestClient.Completion(9, TransferStatus.OK, 64L * BLOCK));
    }

    @Test
    void shouldJournalEachSubmitOnItsOwnAndABatchsEntriesOfARunAsOneRequest()
    {
        submit(1, LOCAL, TARGET, BLOCK);
        submitBatch(2, 8, 5, -1); // entry 5 fails
        submit(3, LOCAL + BLOCK, TARGET + (long)BLOCKS * BLOCK, BLOCK); // fails

        intake.doWork();
        assertThat(journal.records).as("intake leaves a run's members to the worker").isEmpty();
        worker.doWork();

        final int refused = TransferStatus.TARGET_RANGE_NOT_REGISTERED;
        assertThat(journal.records).containsExactly(
            "SUBMITTED 1 " + BLOCK, "COMPLETED 1 0 " + BLOCK + " " + BLOCK,
            "SUBMITTED 2 " + 8 * BLOCK, "COMPLETED 2 " + refused + " " + 8 * BLOCK + " " + 7 * BLOCK,
            "SUBMITTED 3 " + BLOCK, "COMPLETED 3 " + refused + " " + BLOCK + " 0");
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(1, TransferStatus.OK, BLOCK),
            new TestClient.Completion(2, refused, 0), new TestClient.Completion(3, refused, 0));
    }

    @Test
    void shouldTakeEachMembersRegionsFromItsOwnAddressesWhenARunMovesBetweenRegions()
    {
        final byte[] block0 = slice(source, 0);
        final byte[] block2 = slice(source, 2);
        submit(0, LOCAL, TARGET, BLOCK); // source region -> target region
        submit(1, TARGET, LOCAL + 8L * BLOCK, BLOCK); // and back: the regions swap sides
        submit(2, LOCAL + 2L * BLOCK, TARGET + 2L * BLOCK, BLOCK);
        submit(3, LOCAL + (long)BLOCKS * BLOCK - 64, TARGET, 128); // runs past the end of the last region found
        submit(4, LOCAL, TARGET + (long)BLOCKS * BLOCK - 64, 128); // the target's likewise

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("one run").isZero();
        worker.doWork();

        assertThat(alice.completions()).extracting(TestClient.Completion::status).containsExactly(TransferStatus.OK,
            TransferStatus.OK, TransferStatus.OK, TransferStatus.LOCAL_RANGE_NOT_REGISTERED,
            TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertThat(slice(target, 0)).isEqualTo(block0);
        assertThat(slice(source, 8)).as("member 1 read what member 0 wrote").isEqualTo(block0);
        assertThat(slice(target, 2)).isEqualTo(block2);
    }

    @Test
    void shouldSendASmallRequestThatStaysAloneAsBeforeJournaledByIntake()
    {
        submit(5, LOCAL, TARGET, BLOCK);

        intake.doWork();
        assertThat(pipeline.ring().get(0).run.count()).as("no run for a request alone").isZero();
        assertThat(journal.records).containsExactly("SUBMITTED 5 " + BLOCK);
        worker.doWork();

        assertThat(journal.records).containsExactly("SUBMITTED 5 " + BLOCK, "COMPLETED 5 0 " + BLOCK + " " + BLOCK);
        assertThat(alice.completions()).containsExactly(new TestClient.Completion(5, TransferStatus.OK, BLOCK));
    }

    @Test
    void shouldSendARequestLongerThanARunMemberAlone()
    {
        submit(0, LOCAL, TARGET, BLOCK);
        submit(1, LOCAL, TARGET, LocalRun.MAX_MEMBER_LENGTH + BLOCK);
        submit(2, LOCAL, TARGET, BLOCK);

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("small, long, small: three commands").isEqualTo(2);
        worker.doWork();

        assertThat(alice.completions()).extracting(TestClient.Completion::status).containsOnly(TransferStatus.OK);
    }

    @Test
    void shouldCopyAdjacentMembersAsOneSpanAndStillFailTheOnesOutsideTheirRegions()
    {
        // 0..5 follow each other on both sides; 4 and 5 run past the target's end, 6 starts a new span
        final long end = TARGET + (long)BLOCKS * BLOCK;
        for (int i = 0; i < 4; i++)
        {
            submit(i, LOCAL + (long)i * BLOCK, end - 4L * BLOCK + (long)i * BLOCK, BLOCK);
        }
        submit(4, LOCAL + 4L * BLOCK, end, BLOCK);
        submit(5, LOCAL + 5L * BLOCK, end + BLOCK, BLOCK);
        submit(6, LOCAL, TARGET, 2 * BLOCK);

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("one run").isZero();
        worker.doWork();

        assertThat(alice.completions()).extracting(TestClient.Completion::status).containsExactly(TransferStatus.OK,
            TransferStatus.OK, TransferStatus.OK, TransferStatus.OK, TransferStatus.TARGET_RANGE_NOT_REGISTERED,
            TransferStatus.TARGET_RANGE_NOT_REGISTERED, TransferStatus.OK);
        for (int i = 0; i < 4; i++)
        {
            assertThat(slice(target, BLOCKS - 4 + i)).as("member " + i).isEqualTo(slice(source, i));
        }
        assertThat(slice(target, 0)).isEqualTo(slice(source, 0));
        assertThat(slice(target, 1)).isEqualTo(slice(source, 1));
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(6L * BLOCK);
    }

    @Test
    void shouldTakeABatchsEntriesIntoARunUntilOneDoesNotFitAndSendThatOneTheUsualWay()
    {
        final int entries = 8;
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(11, Opcode.WRITE, entries, alice.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < entries; i++)
        {
            final long length = i == 3 ? 0 : i == 5 ? 32L * BLOCK : BLOCK; // 3: refused; 5: too long for a run
            batch.entry(i, LOCAL + (long)i * BLOCK, TARGET + (long)(i == 5 ? 16 : i) * BLOCK, length);
        }
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(entries, 0))).isTrue();

        intake.doWork();
        assertThat(pipeline.ring().getCursor()).as("0-2 in a run, 3 alone, 4 alone, 5 alone, 6-7 in a run")
            .isEqualTo(4);
        worker.doWork();

        assertThat(alice.completions())
            .containsExactly(new TestClient.Completion(11, TransferStatus.INVALID_LENGTH, 0));
        for (final int i : new int[] {0, 1, 2, 4, 6, 7})
        {
            assertThat(slice(target, i)).as("entry " + i).isEqualTo(slice(source, i));
        }
        assertThat(slice(target, 3)).isEqualTo(new byte[BLOCK]);
        assertThat(target.asSlice(16L * BLOCK, 32L * BLOCK).toArray(ValueLayout.JAVA_BYTE))
            .isEqualTo(source.asSlice(5L * BLOCK, 32L * BLOCK).toArray(ValueLayout.JAVA_BYTE));
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(7);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(1);
    }

    @Test
    void shouldAnswerEveryMemberOfSeededRunsAsIfEachWentAloneWhereSpansCrossRegions()
    {
        // the target is two regions back to back: a span across their seam is two copies, a member across it fails
        final long half = (long)BLOCKS / 2 * BLOCK;
        alice.regions(new Region(LOCAL, source.byteSize(), "cpu:0", source, source),
            new Region(TARGET, half, "cpu:0", target.asSlice(0, half), target),
            new Region(TARGET + half, half, "cpu:0", target.asSlice(half, half), target));
        final byte[] expected = new byte[(int)target.byteSize()];
        final byte[] from = source.toArray(ValueLayout.JAVA_BYTE);
        final SplittableRandom random = new SplittableRandom(1616);
        long requestId = 0;
        long ok = 0;
        long failed = 0;
        long bytes = 0;
        for (int round = 0; round < 200; round++)
        {
            final List<Integer> statuses = new ArrayList<>();
            long local = LOCAL;
            long to = TARGET;
            for (int member = 0, members = 2 + random.nextInt(15); member < members; member++)
            {
                final long length = 1 + random.nextInt(2 * BLOCK);
                if (member == 0 || random.nextInt(4) == 0)
                {
                    // anywhere, a little outside either side now and then
                    local = LOCAL - BLOCK + random.nextLong(source.byteSize() + BLOCK);
                    to = TARGET - BLOCK + random.nextLong(target.byteSize() + BLOCK);
                }
                submit(requestId++, local, to, length);
                final boolean localIn = local >= LOCAL && local + length <= LOCAL + source.byteSize();
                final boolean targetIn = to >= TARGET && (to + length <= TARGET + half ||
                    to >= TARGET + half && to + length <= TARGET + target.byteSize());
                statuses.add(!localIn ? TransferStatus.LOCAL_RANGE_NOT_REGISTERED :
                    !targetIn ? TransferStatus.TARGET_RANGE_NOT_REGISTERED : TransferStatus.OK);
                if (localIn && targetIn)
                {
                    System.arraycopy(from, (int)(local - LOCAL), expected, (int)(to - TARGET), (int)length);
                    ok++;
                    bytes += length;
                }
                else
                {
                    failed++;
                }
                local += length; // the next member follows on both sides, unless it jumps
                to += length;
            }
            for (int pass = 0; pass < 3; pass++) // at most 16 records a pass, and a read stops at the ring's end
            {
                intake.doWork();
                worker.doWork();
            }

            final List<TestClient.Completion> completions = new ArrayList<>(alice.completions());
            completions.addAll(alice.completions()); // a read stops at the ring's end: the rest is after its wrap
            assertThat(completions).as("round " + round).extracting(TestClient.Completion::status)
                .containsExactlyElementsOf(statuses);
        }
        assertThat(target.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
        assertThat(disconnects.isEmpty()).isTrue();
        // the counters move once per run, from the tally of its members' results: spans and members alike
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(ok);
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(failed);
        assertThat(counters.get(SystemCounter.BYTES_WRITTEN).get()).isEqualTo(bytes);
    }

    private void submit(final long requestId, final long local, final long targetAddress, final long length)
    {
        new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved().opcode(Opcode.WRITE).requestId(requestId)
            .segmentHandle(alice.session.segmentHandle()).localAddress(local).targetAddress(targetAddress)
            .length(length).traceId(requestId).submitNanos(1).noNotify();
        assertThat(alice.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.recordLength(0)))
            .isTrue();
    }

    /**
     * A WRITE batch copying block i to block (entries - 1 - i); entries {@code badA} and {@code badB} (when >= 0)
     * point past the target region.
     */
    private void submitBatch(final long requestId, final int entries, final int badA, final int badB)
    {
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(requestId, Opcode.WRITE, entries, alice.session.segmentHandle(), 0, 1, null, 0, 0);
        for (int i = 0; i < entries; i++)
        {
            final boolean bad = i == badA || i == badB;
            batch.entry(i, LOCAL + (long)i * BLOCK,
                bad ? TARGET + (long)BLOCKS * BLOCK : TARGET + (long)(entries - 1 - i) * BLOCK, BLOCK);
        }
        assertThat(alice.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0,
            SubmitBatchFlyweight.bodyLength(entries, 0))).isTrue();
    }

    private static byte[] slice(final MemorySegment memory, final int block)
    {
        return memory.asSlice((long)block * BLOCK, BLOCK).toArray(ValueLayout.JAVA_BYTE);
    }
}
