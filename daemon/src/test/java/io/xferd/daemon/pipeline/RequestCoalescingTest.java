package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemotePeer;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Merging adjacent requests into one transfer, single-threaded: the test writes SUBMIT and SUBMIT_BATCH records into
 * a client's submit ring, runs intake's and a transfer worker's {@code doWork()} and looks at what the transport was
 * handed and what the client was answered. Requests to another daemon whose local and target ranges both continue
 * the previous one merge (up to the limit); anything else does not; a merged range that crosses a region's end is
 * moved request by request; every request is answered on its own, also when the merged transfer fails.
 */
@Timeout(10)
class RequestCoalescingTest
{
    private static final int BLOCK = 32 * 1024;
    private static final long LIMIT = 4 * BLOCK;
    private static final long LOCAL = 0x100_0000L;
    private static final long TARGET = 0x7000_0000L;
    private static final long TARGET_LENGTH = 1 << 20;

    private final Arena arena = Arena.ofShared();
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
    private final SessionTable registry = new SessionTable(4);
    private final CachedNanoClock clock = new CachedNanoClock();
    private final UnsafeBuffer scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024));
    private final TestClient client = new TestClient(0, "prefill", 256 * 1024);
    private final RecordingTransport transport = new RecordingTransport();
    private final TransferPipeline pipeline = new TransferPipeline(1024, 1);
    private final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters, clock,
        TransferJournal.DISABLED, 64, 4, LIMIT);
    private final TransferWorker worker = new TransferWorker(0, pipeline, registry,
        new CompletionSender(disconnects, counters), transport, counters, clock, 1 << 30, Long.MAX_VALUE,
        TransferJournal.DISABLED, new RegionCopierTest.RecordingDeviceMemory(),
        io.xferd.daemon.session.AccessPolicy.OWNER_ONLY);
    private final long remote = transport.remoteSegments().add(new RemoteSegment("10.0.0.2:12001/decode", new Peer(),
        7, 1, descriptor(new SegmentDescriptor.Buffer(TARGET, TARGET_LENGTH, "cpu:0"))));

    /** What the transport was handed: the first request's id, the length and each merged request (id, length). */
    private record Handed(long requestId, long localAddress, long targetAddress, long length, List<long[]> members)
    {
    }

    RequestCoalescingTest()
    {
        client.regions(region(LOCAL, 1 << 20));
        registry.add(client.session);
    }

    @AfterEach
    void close()
    {
        arena.close();
    }

    @Test
    void shouldMergeAdjacentRequestsToAPeerIntoOneTransferAndAnswerEachOnItsOwn()
    {
        for (int i = 0; i < 4; i++)
        {
            submit(i, Opcode.WRITE, remote, LOCAL + (long)i * BLOCK, TARGET + (long)i * BLOCK, BLOCK, 9, false);
        }

        run();

        assertThat(transport.handed).as("one transfer for four adjacent blocks").hasSize(1);
        final Handed handed = transport.handed.getFirst();
        assertThat(handed.length).isEqualTo(4L * BLOCK);
        assertThat(handed.localAddress).isEqualTo(LOCAL);
        assertThat(handed.targetAddress).isEqualTo(TARGET);
        assertThat(handed.members).extracting(m -> m[0]).containsExactly(0L, 1L, 2L, 3L);
        assertThat(handed.members).extracting(m -> m[1]).containsOnly((long)BLOCK);
        assertThat(counters.get(SystemCounter.REQUESTS_COALESCED).get()).isEqualTo(4);
        assertThat(counters.get(SystemCounter.REQUESTS_SUBMITTED).get()).isEqualTo(4);
        assertThat(client.completions()).as("nothing is answered before the transport says the bytes arrived")
            .isEmpty();
    }

    @Test
    void shouldMergeNoFurtherThanTheLimit()
    {
        for (int i = 0; i < 6; i++)
        {
            submit(i, Opcode.WRITE, remote, LOCAL + (long)i * BLOCK, TARGET + (long)i * BLOCK, BLOCK, 9, false);
        }

        run();

        assertThat(transport.handed).extracting(Handed::length).containsExactly(LIMIT, 2L * BLOCK);
        assertThat(transport.handed).extracting(Handed::requestId).containsExactly(0L, 4L);
    }

    @Test
    void shouldNotMergeRequestsThatDoNotContinueTheOneBefore()
    {
        long id = 0;
        submit(id++, Opcode.WRITE, remote, LOCAL, TARGET, BLOCK, 9, false);
        // a gap locally, then a gap at the target
        submit(id++, Opcode.WRITE, remote, LOCAL + 2L * BLOCK, TARGET + BLOCK, BLOCK, 9, false);
        submit(id++, Opcode.WRITE, remote, LOCAL + 3L * BLOCK, TARGET + 3L * BLOCK, BLOCK, 9, false);
        // adjacent both ways, but another opcode, then another trace id (another prompt), then a notify
        submit(id++, Opcode.READ, remote, LOCAL + 4L * BLOCK, TARGET + 4L * BLOCK, BLOCK, 9, false);
        submit(id++, Opcode.READ, remote, LOCAL + 5L * BLOCK, TARGET + 5L * BLOCK, BLOCK, 10, false);
        submit(id++, Opcode.READ, remote, LOCAL + 6L * BLOCK, TARGET + 6L * BLOCK, BLOCK, 10, true);

        run();

        assertThat(transport.handed).extracting(Handed::requestId).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(transport.handed).allSatisfy(h -> assertThat(h.members).isEmpty());
        assertThat(counters.get(SystemCounter.REQUESTS_COALESCED).get()).isZero();
    }

    @Test
    void shouldNotMergeRequestsToAnotherSegmentOrToThisDaemon()
    {
        final long other = transport.remoteSegments().add(new RemoteSegment("10.0.0.3:12001/decode", new Peer(), 7, 1,
            descriptor(new SegmentDescriptor.Buffer(TARGET, TARGET_LENGTH, "cpu:0"))));
        submit(0, Opcode.WRITE, remote, LOCAL, TARGET, BLOCK, 9, false);
        submit(1, Opcode.WRITE, other, LOCAL + BLOCK, TARGET + BLOCK, BLOCK, 9, false);
        final SubmitRequestFlyweight local = new SubmitRequestFlyweight();
        for (int i = 2; i < 4; i++)
        {
            local.wrap(scratch, 0).clearReserved().opcode(Opcode.WRITE).requestId(i)
                .segmentHandle(client.session.segmentHandle()).localAddress(LOCAL + (long)i * BLOCK)
                .targetAddress(LOCAL + (long)(i + 8) * BLOCK).length(BLOCK).traceId(9).submitNanos(1).noNotify();
            assertThat(client.submitter.write(RecordTypes.SUBMIT, scratch, 0, SubmitRequestFlyweight.recordLength(0)))
                .isTrue();
        }

        intake.doWork();
        final List<Long> published = new ArrayList<>();
        drainPipeline(published);

        assertThat(published).as("each request on its own range").containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void shouldMergeAdjacentEntriesOfABatchAndCountEachIntoTheBatch()
    {
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(scratch, 0)
            .header(77, Opcode.WRITE, 4, remote, 9, 1, null, 0, 0);
        for (int i = 0; i < 4; i++)
        {
            batch.entry(i, LOCAL + (long)i * BLOCK, TARGET + (long)i * BLOCK, BLOCK);
        }
        assertThat(client.submitter.write(RecordTypes.SUBMIT_BATCH, scratch, 0, SubmitBatchFlyweight.bodyLength(4, 0)))
            .isTrue();

        run();

        assertThat(transport.handed).hasSize(1);
        assertThat(transport.handed.getFirst().members).extracting(m -> m[2]).containsExactly(0L, 1L, 2L, 3L);
        assertThat(transport.handed.getFirst().members).extracting(m -> m[0]).containsOnly(77L);
    }

    @Test
    void shouldMoveTheRequestsOneByOneWhenTheMergedRangeCrossesARegionsEnd()
    {
        // two regions back to back: adjacent addresses, but no single region holds both blocks
        client.regions(region(LOCAL, BLOCK), region(LOCAL + BLOCK, BLOCK));
        submit(0, Opcode.WRITE, remote, LOCAL, TARGET, BLOCK, 9, false);
        submit(1, Opcode.WRITE, remote, LOCAL + BLOCK, TARGET + BLOCK, BLOCK, 9, false);

        run();

        assertThat(transport.handed).extracting(Handed::requestId).containsExactly(0L, 1L);
        assertThat(transport.handed).extracting(Handed::localAddress).containsExactly(LOCAL, LOCAL + BLOCK);
        assertThat(transport.handed).allSatisfy(h -> assertThat(h.members).isEmpty());
        transport.completeAll();
        assertThat(client.completions()).containsExactly(
            new TestClient.Completion(0, TransferStatus.OK, BLOCK), new TestClient.Completion(1, TransferStatus.OK, BLOCK));
        assertSubmitterNotBorrowed();
    }

    @Test
    void shouldMoveTheRequestsOneByOneWhenTheMergedRangeCrossesThePeersBufferEnd()
    {
        final long split = transport.remoteSegments().add(new RemoteSegment("10.0.0.4:12001/decode", new Peer(), 7, 1,
            descriptor(new SegmentDescriptor.Buffer(TARGET, BLOCK, "cpu:0"),
                new SegmentDescriptor.Buffer(TARGET + BLOCK, BLOCK, "cpu:0"))));
        submit(0, Opcode.READ, split, LOCAL, TARGET, BLOCK, 9, false);
        submit(1, Opcode.READ, split, LOCAL + BLOCK, TARGET + BLOCK, BLOCK, 9, false);

        run();

        assertThat(transport.handed).extracting(Handed::targetAddress).containsExactly(TARGET, TARGET + BLOCK);
        assertThat(transport.handed).allSatisfy(h -> assertThat(h.members).isEmpty());
    }

    @Test
    void shouldFailEveryMergedRequestWhenTheTransferIsRefused()
    {
        transport.refuseWith = TransferStatus.TRANSPORT_ERROR;
        for (int i = 0; i < 3; i++)
        {
            submit(i, Opcode.WRITE, remote, LOCAL + (long)i * BLOCK, TARGET + (long)i * BLOCK, BLOCK, 9, false);
        }

        run();

        assertThat(client.completions()).as("one failure per request, none lost, none OK").containsExactly(
            new TestClient.Completion(0, TransferStatus.TRANSPORT_ERROR, 0),
            new TestClient.Completion(1, TransferStatus.TRANSPORT_ERROR, 0),
            new TestClient.Completion(2, TransferStatus.TRANSPORT_ERROR, 0));
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(3);
        assertSubmitterNotBorrowed();
    }

    @Test
    void shouldNotMergeWithTheLimitAtZero()
    {
        final TransferPipeline plain = new TransferPipeline(64, 1);
        final SubmitAdapter noMerging = new SubmitAdapter(plain.ring(), registry, disconnects, counters, clock,
            TransferJournal.DISABLED, 64, 4);
        submit(0, Opcode.WRITE, remote, LOCAL, TARGET, BLOCK, 9, false);
        submit(1, Opcode.WRITE, remote, LOCAL + BLOCK, TARGET + BLOCK, BLOCK, 9, false);

        noMerging.doWork();

        assertThat(plain.ring().getCursor()).as("two commands").isEqualTo(1);
        assertThat(counters.get(SystemCounter.REQUESTS_COALESCED).get()).isZero();
    }

    private void run()
    {
        for (int i = 0; i < 8; i++)
        {
            intake.doWork();
            worker.doWork();
        }
    }

    private void drainPipeline(final List<Long> published)
    {
        try
        {
            pipeline.workerPoller(0).poll((command, sequence, endOfBatch) ->
            {
                if (command.submitter != null)
                {
                    if (command.run.count() == 0)
                    {
                        published.add(command.requestId);
                    }
                    for (int i = 0; i < command.run.count(); i++)
                    {
                        published.add(command.run.requestId(i)); // a local run: each member keeps its own range
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
    }

    private void submit(final long requestId, final int opcode, final long segment, final long local,
        final long target, final long length, final long traceId, final boolean withNotify)
    {
        final byte[] note = {'k', 'v'};
        final SubmitRequestFlyweight record = new SubmitRequestFlyweight().wrap(scratch, 0).clearReserved()
            .opcode(opcode).requestId(requestId).segmentHandle(segment).localAddress(local).targetAddress(target)
            .length(length).traceId(traceId).submitNanos(1);
        if (withNotify)
        {
            record.putNotify(note, 0, note.length);
        }
        else
        {
            record.noNotify();
        }
        assertThat(client.submitter.write(RecordTypes.SUBMIT, scratch, 0,
            SubmitRequestFlyweight.recordLength(withNotify ? note.length : 0))).isTrue();
    }

    private Region region(final long ownerAddress, final long length)
    {
        final MemorySegment memory = arena.allocate(length);
        return new Region(ownerAddress, length, "cpu:0", memory, memory);
    }

    private void assertSubmitterNotBorrowed()
    {
        client.session.markClosed();
        assertThat(client.session.isReclaimable()).as("every borrow of the submitter was given back").isTrue();
    }

    private static SegmentDescriptor descriptor(final SegmentDescriptor.Buffer... buffers)
    {
        return new SegmentDescriptor(SegmentDescriptor.VERSION, "decode", "tcp", "10.0.0.2:12001", 1, 7, List.of(),
            List.of(), List.of(buffers), null);
    }

    private static final class Peer implements RemotePeer
    {
        public String address()
        {
            return "10.0.0.2:12001";
        }

        public boolean isReachable()
        {
            return true;
        }
    }

    /**
     * Takes each request as the TCP transport would (keeping the submitter's and the local region's borrows), and
     * answers them when the test says the bytes arrived, each merged request on its own.
     */
    private final class RecordingTransport implements PeerTransport
    {
        private final RemoteSegments segments = new RemoteSegments();
        private final List<Handed> handed = new ArrayList<>();
        private final List<RemoteRequest> taken = new ArrayList<>();
        private int refuseWith = TransferStatus.OK;

        public String name()
        {
            return "recording";
        }

        public void journal(final TransferJournal journal)
        {
        }

        public RemoteSegments remoteSegments()
        {
            return segments;
        }

        public int submit(final RemoteRequest request)
        {
            if (refuseWith != TransferStatus.OK)
            {
                return refuseWith;
            }
            final List<long[]> members = new ArrayList<>();
            if (request.members() != null)
            {
                for (int i = 0; i < request.members().count(); i++)
                {
                    members.add(new long[] {request.members().requestId(i), request.members().length(i),
                        request.members().batchEntry(i)});
                }
            }
            handed.add(new Handed(request.requestId(), request.localAddress(), request.targetAddress(),
                request.length(), members));
            final RemoteRequest copy = new RemoteRequest().submitter(request.submitter())
                .ids(request.requestId(), request.traceId()).local(request.local(), request.localAddress())
                .length(request.length());
            taken.add(copy);
            return TransferStatus.OK;
        }

        /**
         * Answer every single request taken OK, giving back the borrows the transport held.
         */
        void completeAll()
        {
            final CompletionSender sender = new CompletionSender(disconnects, counters);
            for (final RemoteRequest request : taken)
            {
                sender.complete(request.submitter(), request.requestId(), TransferStatus.OK, request.length(), 0, 0);
                request.local().release();
                request.submitter().release();
            }
            taken.clear();
        }

        public boolean carriesCoalescedRequests()
        {
            return true;
        }

        public void openAsync(final String peerAddress, final String segmentName, final Consumer<Object> onResult)
        {
        }

        public Map<String, Object> links()
        {
            return Map.of();
        }

        public void close()
        {
        }
    }
}
