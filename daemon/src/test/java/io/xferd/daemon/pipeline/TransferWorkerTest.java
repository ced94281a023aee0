package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.daemon.transport.tcp.PeerLink;
import io.xferd.ipc.Opcode;
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
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transfer worker, single-threaded: the test publishes commands into the pipeline as intake does and calls
 * {@code doWork()}. Every request it takes ends with exactly one completion, also when the copy or the transport
 * throws, and every borrow it took (submitter, both regions) is given back.
 */
@Timeout(10)
class TransferWorkerTest
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x20_0000L;
    private static final int LENGTH = 4096;

    private final Arena arena = Arena.ofShared();
    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SystemCounters counters = new SystemCounters(countersManager);
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
    private final TransferPipeline pipeline = new TransferPipeline(16, 1);
    private final SessionTable registry = new SessionTable(4);
    private final CachedNanoClock clock = new CachedNanoClock();
    private final TestClient submitter = new TestClient(0, "prefill", 4096);
    private final TestClient target = new TestClient(1, "decode", 4096);
    private final ThrowingTransport transport = new ThrowingTransport();
    private final TransferWorker worker = new TransferWorker(0, pipeline, registry,
        new CompletionSender(disconnects, counters), transport, counters, clock, 1 << 20, Long.MAX_VALUE,
        TransferJournal.DISABLED, new RegionCopierTest.RecordingDeviceMemory(),
        io.xferd.daemon.session.AccessPolicy.OWNER_ONLY);

    @AfterEach
    void close()
    {
        arena.close();
    }

    private Region region(final long ownerAddress, final int fill)
    {
        final MemorySegment memory = arena.allocate(LENGTH);
        memory.fill((byte)fill);
        return new Region(ownerAddress, LENGTH, "cpu:0", memory, memory);
    }

    /**
     * A region whose mapping is gone (its arena closed): any copy through it throws, as a copy through memory that was
     * unmapped by mistake would.
     */
    private static Region unmappedRegion(final long ownerAddress)
    {
        final Arena gone = Arena.ofShared();
        final MemorySegment memory = gone.allocate(LENGTH);
        gone.close();
        return new Region(ownerAddress, LENGTH, "cpu:0", memory, memory);
    }

    private void publish(final int opcode, final long segmentHandle, final long requestId, final long length)
    {
        final long sequence = pipeline.ring().next();
        final TransferCommand command = pipeline.ring().get(sequence);
        assertThat(submitter.session.tryAcquire()).isTrue(); // intake's borrow, which the worker gives back
        command.submitter = submitter.session;
        command.batch = null;
        command.requestId = requestId;
        command.opcode = opcode;
        command.segmentHandle = segmentHandle;
        command.localAddress = LOCAL;
        command.targetAddress = TARGET;
        command.length = length;
        command.refusal = 0;
        command.notifyLength = 0;
        pipeline.ring().publish(sequence);
    }

    private void connectBoth()
    {
        registry.add(submitter.session);
        registry.add(target.session);
    }

    /**
     * Closes it (as an unregister or a disconnect does) and checks that nobody borrows it once the worker's duty cycle
     * after the close ended: a region borrow kept from the last request ends with that cycle.
     */
    private void assertNotBorrowed(final io.xferd.daemon.memory.RefCounted borrowed)
    {
        borrowed.markClosed();
        worker.doWork();
        assertThat(borrowed.isReclaimable()).as(borrowed + " has no borrower left").isTrue();
    }

    @Test
    void shouldRefuseATargetOfAnotherUidOnEveryRequestAndMoveNothing()
    {
        final TestClient stranger = new TestClient(2, "stranger", 4096, 1001);
        final Region local = region(LOCAL, 7);
        final Region remote = region(TARGET, 3);
        submitter.regions(local);
        stranger.regions(remote);
        registry.add(submitter.session);
        registry.add(stranger.session);

        publish(Opcode.WRITE, stranger.session.segmentHandle(), 21, LENGTH);
        assertThat(worker.doWork()).isEqualTo(1);
        publish(Opcode.READ, stranger.session.segmentHandle(), 22, LENGTH);
        assertThat(worker.doWork()).isEqualTo(1);

        assertThat(submitter.completions()).containsExactly(
            new TestClient.Completion(21, TransferStatus.ACCESS_DENIED, 0),
            new TestClient.Completion(22, TransferStatus.ACCESS_DENIED, 0));
        assertThat(remote.mapping().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte)3);
        assertThat(local.mapping().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte)7);
    }

    @Test
    void shouldCopyAWriteAndCompleteItWithEveryByte()
    {
        final Region local = region(LOCAL, 7);
        final Region remote = region(TARGET, 0);
        submitter.regions(local);
        target.regions(remote);
        connectBoth();
        clock.update(5_000);

        publish(Opcode.WRITE, target.session.segmentHandle(), 11, LENGTH);
        assertThat(worker.doWork()).isEqualTo(1);

        assertThat(submitter.completions()).containsExactly(new TestClient.Completion(11, TransferStatus.OK, LENGTH));
        assertThat(remote.mapping().toArray(ValueLayout.JAVA_BYTE)).containsOnly(7);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(1);
        assertNotBorrowed(local);
        assertNotBorrowed(remote);
        assertNotBorrowed(submitter.session);
    }

    /**
     * The worker keeps its borrows of a request's regions for the requests that follow (no atomic per request), but
     * the conductor never frees a region the worker may still copy through: an unregister between two requests finds
     * the region borrowed until the worker's next duty cycle ends, the request in that cycle is refused and copies
     * nothing, and after that cycle nothing holds the region.
     */
    @Test
    void shouldHoldARegionUnregisteredBetweenRequestsOnlyUntilTheNextCycleAndCopyNothingIntoIt()
    {
        final Region local = region(LOCAL, 7);
        final Region remote = region(TARGET, 0);
        submitter.regions(local);
        target.regions(remote);
        connectBoth();
        publish(Opcode.WRITE, target.session.segmentHandle(), 81, LENGTH);
        worker.doWork();
        assertThat(submitter.completions()).containsExactly(new TestClient.Completion(81, TransferStatus.OK, LENGTH));

        remote.markClosed(); // unregistered: the conductor waits until nobody borrows it before unmapping it
        assertThat(remote.isReclaimable()).as("the worker still holds it from the last request").isFalse();
        remote.mapping().fill((byte)0);
        publish(Opcode.WRITE, target.session.segmentHandle(), 82, LENGTH);
        worker.doWork();

        assertThat(submitter.completions()).containsExactly(new TestClient.Completion(82, TransferStatus.TARGET_GONE, 0));
        assertThat(remote.mapping().toArray(ValueLayout.JAVA_BYTE)).as("nothing copied into it").containsOnly(0);
        assertThat(remote.isReclaimable()).as("given back with the cycle that found it closed").isTrue();
        assertNotBorrowed(local);
    }

    @Test
    void shouldGiveItsBorrowsBackAfterAnIdleSpell()
    {
        final Region local = region(LOCAL, 7);
        final Region remote = region(TARGET, 0);
        submitter.regions(local);
        target.regions(remote);
        connectBoth();
        publish(Opcode.WRITE, target.session.segmentHandle(), 91, LENGTH);
        worker.doWork();
        for (int cycle = 0; cycle < RegionBorrow.IDLE_CYCLES; cycle++)
        {
            assertThat(worker.doWork()).isZero();
        }

        local.markClosed();
        remote.markClosed();
        assertThat(local.isReclaimable()).as("an idle worker holds nothing an unregister waits for").isTrue();
        assertThat(remote.isReclaimable()).isTrue();
    }

    @Test
    void shouldEndARequestWhoseCopyThrowsWithATransportErrorAndKeepServing()
    {
        final Region local = region(LOCAL, 7);
        final Region remote = unmappedRegion(TARGET);
        submitter.regions(local);
        target.regions(remote);
        connectBoth();

        publish(Opcode.WRITE, target.session.segmentHandle(), 21, LENGTH);
        worker.doWork();

        assertThat(submitter.completions()).as("answered, with a typed failure and no bytes")
            .containsExactly(new TestClient.Completion(21, TransferStatus.TRANSPORT_ERROR, 0));
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(1);

        // the next request of the same client, to memory that works, still goes through
        final Region good = region(TARGET, 0);
        target.regions(good);
        publish(Opcode.WRITE, target.session.segmentHandle(), 22, LENGTH);
        worker.doWork();
        assertThat(submitter.completions()).containsExactly(new TestClient.Completion(22, TransferStatus.OK, LENGTH));

        assertNotBorrowed(local);
        assertNotBorrowed(remote);
        assertNotBorrowed(good);
        assertNotBorrowed(submitter.session);
    }

    @Test
    void shouldFailTheWholeBatchWithOneCompletionWhenOneEntrysCopyThrows()
    {
        final Region local = region(LOCAL, 7);
        final Region good = region(TARGET, 0);
        final Region broken = unmappedRegion(TARGET + LENGTH);
        submitter.regions(local);
        target.regions(good, broken);
        connectBoth();
        final BatchTracker batch = new BatchTrackerPool(1, new ManyToOneConcurrentArrayQueue<>(1)).take();
        batch.begin(submitter.session, 61, Opcode.WRITE, 2, target.session.segmentHandle(), 0, 0, 0);

        publishEntry(batch, 0, TARGET, 64);
        publishEntry(batch, 1, TARGET + LENGTH, 64);
        worker.doWork();
        worker.doWork();

        assertThat(submitter.completions()).as("one answer for the batch, with the failed entry's status")
            .containsExactly(new TestClient.Completion(61, TransferStatus.TRANSPORT_ERROR, 0));
        assertNotBorrowed(local);
        assertNotBorrowed(good);
        assertNotBorrowed(broken);
        assertNotBorrowed(submitter.session);
    }

    private void publishEntry(final BatchTracker batch, final int entry, final long targetAddress, final long length)
    {
        final long sequence = pipeline.ring().next();
        final TransferCommand command = pipeline.ring().get(sequence);
        assertThat(submitter.session.tryAcquire()).isTrue();
        command.submitter = submitter.session;
        command.batch = batch;
        command.batchEntry = entry;
        command.requestId = batch.requestId;
        command.opcode = batch.opcode;
        command.segmentHandle = batch.segmentHandle;
        command.localAddress = LOCAL;
        command.targetAddress = targetAddress;
        command.length = length;
        command.refusal = 0;
        command.notifyLength = 0;
        pipeline.ring().publish(sequence);
    }

    @Test
    void shouldEndARemoteRequestWhoseTransportThrowsAndGiveBackTheLocalRegion()
    {
        final Region local = region(LOCAL, 7);
        submitter.regions(local);
        connectBoth();
        final long handle = transport.remoteSegments().add(new RemoteSegment("peer:1/seg", null, 1, 1, null));
        assertThat(RemoteSegments.isRemote(handle)).isTrue();

        publish(Opcode.WRITE, handle, 31, LENGTH);
        worker.doWork();

        assertThat(submitter.completions())
            .containsExactly(new TestClient.Completion(31, TransferStatus.TRANSPORT_ERROR, 0));
        assertNotBorrowed(local);
        assertNotBorrowed(submitter.session);
    }

    @Test
    void shouldAnswerRequestsItCannotServeWithTheirOwnStatus()
    {
        final Region local = region(LOCAL, 7);
        submitter.regions(local);
        target.regions(region(TARGET, 0));
        connectBoth();

        publish(Opcode.WRITE, target.session.segmentHandle() + (1L << 32), 41, LENGTH); // a stale generation
        publish(Opcode.WRITE, target.session.segmentHandle(), 42, 0);
        publish(Opcode.WRITE, target.session.segmentHandle(), 43, 2L << 20); // above the maximum request length
        publish(7, target.session.segmentHandle(), 44, LENGTH);
        publish(Opcode.READ, target.session.segmentHandle(), 45, LENGTH + 1); // beyond both regions
        for (int i = 0; i < 5; i++)
        {
            worker.doWork();
        }

        assertThat(submitter.completions()).containsExactly(
            new TestClient.Completion(41, TransferStatus.UNKNOWN_SEGMENT, 0),
            new TestClient.Completion(42, TransferStatus.INVALID_LENGTH, 0),
            new TestClient.Completion(43, TransferStatus.INVALID_LENGTH, 0),
            new TestClient.Completion(44, TransferStatus.INVALID_OPCODE, 0),
            new TestClient.Completion(45, TransferStatus.LOCAL_RANGE_NOT_REGISTERED, 0));
        assertNotBorrowed(submitter.session);
    }

    @Test
    void shouldRefuseACopyIntoARegionClosedAfterTheLookup()
    {
        final Region local = region(LOCAL, 7);
        final Region remote = region(TARGET, 0);
        submitter.regions(local);
        target.regions(remote);
        connectBoth();
        remote.markClosed(); // unregistered: still in the table this worker read, but no new borrower gets in

        publish(Opcode.WRITE, target.session.segmentHandle(), 51, LENGTH);
        worker.doWork();

        assertThat(submitter.completions()).containsExactly(new TestClient.Completion(51, TransferStatus.TARGET_GONE, 0));
        assertThat(remote.mapping().toArray(ValueLayout.JAVA_BYTE)).containsOnly(0);
        assertThat(remote.isReclaimable()).isTrue();
    }

    /**
     * A file that cannot be sealed (a tmpfs file) shrinks under a copy: the copy faults (SIGBUS, which the JVM turns
     * into an InternalError), the request ends MEMORY_FAULT and is counted, the owner of the shrunk file (the target
     * here, not the submitter) is queued to be cut off, and the next request goes through.
     */
    @Test
    void shouldFailACopyThatFaultsOnAShrunkFileAndCutOffItsOwner() throws Exception
    {
        final long big = 1 << 20;
        final java.nio.file.Path file = java.nio.file.Files.createTempFile(
            java.nio.file.Path.of("/dev/shm"), "xferd-worker-fault-", ".mem");
        try (var channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ,
            java.nio.file.StandardOpenOption.WRITE); Arena mapArena = Arena.ofShared())
        {
            channel.truncate(0).write(ByteBuffer.allocate(1), big - 1);
            final MemorySegment mapped =
                channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, big, mapArena);
            final Region shrinking = new Region(TARGET, big, "cpu:0", mapped, mapped);
            final MemorySegment source = arena.allocate(big);
            source.fill((byte)9);
            final Region local = new Region(LOCAL, big, "cpu:0", source, source);
            submitter.regions(local);
            target.regions(shrinking);
            connectBoth();
            channel.truncate(4096); // the owner takes back all but the first page

            publish(Opcode.WRITE, target.session.segmentHandle(), 71, big);
            worker.doWork();

            assertThat(submitter.completions()).as("answered with a typed failure")
                .containsExactly(new TestClient.Completion(71, TransferStatus.MEMORY_FAULT, 0));
            assertThat(counters.get(SystemCounter.MEMORY_FAULTS).get()).isEqualTo(1);
            assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(1);
            assertThat(disconnects.poll()).as("the owner of the shrunk file is cut off").isSameAs(target.session);
            assertThat(disconnects.poll()).as("and nobody else").isNull();
            assertThat(target.session.protocolViolation()).contains("shrank");
            assertNotBorrowed(local);
            assertNotBorrowed(shrinking);

            // the worker lives: the submitter's next request, into memory that is whole, completes
            final Region good = region(TARGET, 0);
            target.regions(good);
            submitter.regions(region(LOCAL, 9));
            publish(Opcode.WRITE, target.session.segmentHandle(), 72, LENGTH);
            worker.doWork();
            assertThat(submitter.completions()).containsExactly(new TestClient.Completion(72, TransferStatus.OK, LENGTH));
            assertThat(good.mapping().toArray(ValueLayout.JAVA_BYTE)).containsOnly(9);
        }
        finally
        {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    /**
     * A peer transport whose submit fails by throwing, as a bug in a transport would.
     */
    private static final class ThrowingTransport implements PeerTransport
    {
        private final RemoteSegments segments = new RemoteSegments();

        public String name()
        {
            return "throwing";
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
            throw new IllegalStateException("transport bug");
        }

        public void openAsync(final String peerAddress, final String segmentName, final Consumer<Object> onResult)
        {
        }

        public Map<String, PeerLink> links()
        {
            return Map.of();
        }

        public void close()
        {
        }
    }
}
