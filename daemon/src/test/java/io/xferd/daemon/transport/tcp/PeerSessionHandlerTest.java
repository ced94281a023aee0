package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.control.SessionRegions;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SessionTable;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.EOFException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The target's side of a TCP peer connection ({@link PeerSessionHandler}, behind a real {@link PeerServer} on
 * 127.0.0.1:0), as a specification: a WRITE it refuses is answered with a typed status, lands no byte and leaves
 * the connection serving; a WRITE whose peer stalls in the middle of its payload is served up to its deadline on the
 * injected clock, and one nanosecond past it is cut off and gives its region's borrow back; a frame with a wrong tag cuts that peer off while
 * the server serves everyone else, also in the middle of frames sent back to back (nothing after it lands); a burst
 * cut short has its whole WRITEs acknowledged and never the one whose bytes did not all arrive; the answer to the
 * slice that ends its request leaves before the next slice is read, those to slices in the middle of one wait.
 * The initiator is a {@link RawPeer} that speaks the wire protocol frame by frame.
 */
@Timeout(30)
class PeerSessionHandlerTest
{
    private static final String TOKEN = "peer-session-handler-test-token-0123456789ab";
    private static final int SIZE = 64 * 1024;
    private static final long BASE = 0x7f00_0000_0000L;
    private static final long TIMEOUT_MS = 5_000;
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
    private static final long START_NS = 1_000_000_000_000L;
    private static final byte UNTOUCHED = 0x5a;
    /** Tries of a burst that must reach the handler whole (see the three-slice test). */
    private static final int BURST_ATTEMPTS = 5;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final DaemonContext context = new DaemonContext().rpcAddress("127.0.0.1:0").maxClients(1)
        .transferTimeoutMs(TIMEOUT_MS).clusterToken(TOKEN);
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final SessionTable registry = new SessionTable(1);
    private final Arena arena = Arena.ofShared();
    private final MemorySegment memory = arena.allocate(SIZE, 4096);
    private final Region region = new Region(BASE, SIZE, "cpu:0", memory, memory);
    private final ClientSession owner = new ClientSession(0, 1, "decode", "127.0.0.1:0/decode",
        (int)ProcessHandle.current().pid(), 0, 0, null, null, null, new ManyToOneRingBuffer(new UnsafeBuffer(
        ByteBuffer.allocateDirect(64 * 1024 + RingBufferDescriptor.TRAILER_LENGTH))), null);
    private final PeerServer server;

    PeerSessionHandlerTest()
    {
        clock.update(START_NS);
        memory.fill(UNTOUCHED);
        SessionRegions.set(owner, RegionTable.EMPTY.with(region));
        registry.add(owner);
        server = new PeerServer(context, registry, counters, new ManyToOneConcurrentArrayQueue<>(4), 77,
            LocalNics.resolve(List.of()), clock);
        server.start();
    }

    @AfterEach
    void close()
    {
        server.close();
        arena.close();
    }

    @Test
    void shouldRefuseAWriteOutsideTheRegionWithATypedStatusLandNoByteAndKeepServing() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");

            peer.writeHead(1, handle, BASE + SIZE - 100, 200, 200);

            final long[] refused = peer.ack();
            assertThat(refused[0]).isEqualTo(1);
            assertThat((int)refused[1]).isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);
            assertThat(refused[2]).as("a refusal carries no payload").isZero();
            assertThat(counters.get(SystemCounter.REMOTE_ACCESS_REFUSED).get()).isEqualTo(1);
            assertThat(counters.get(SystemCounter.REMOTE_BYTES_RECEIVED).get()).isZero();
            for (long i = 0; i < SIZE; i++)
            {
                assertThat(memory.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(UNTOUCHED);
            }

            peer.writeHead(2, handle, BASE, 100, 100);
            assertThat(peer.ack()).as("the same connection serves the next WRITE")
                .containsExactly(2, TransferStatus.OK, 0);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 99)).isZero();
        }
    }

    @Test
    void shouldServeAWriteStalledUntilItsDeadlineAndCutOffOneStalledPastItReleasingItsBorrow() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            final int sent = 1000;

            peer.writeHead(3, handle, BASE, SIZE, sent);
            awaitLanded(sent);
            clock.update(START_NS + TIMEOUT_NS);
            server.checkDeadlines(clock.nanoTime());
            peer.writePayload(SIZE - sent);
            assertThat(peer.ack()).as("a frame at its deadline is still served")
                .containsExactly(3, TransferStatus.OK, 0);

            memory.fill(UNTOUCHED);
            final long frameStart = clock.nanoTime();
            peer.writeHead(4, handle, BASE, SIZE, sent);
            awaitLanded(sent);
            region.markClosed(); // no new borrower: reclaimable as soon as the stalled WRITE lets go
            clock.update(frameStart + TIMEOUT_NS + 1);
            server.checkDeadlines(clock.nanoTime());
            awaitReclaimable();
            assertThatThrownBy(peer::ack).as("a WRITE cut short is never acknowledged")
                .isInstanceOf(EOFException.class);
        }
    }

    @Test
    void shouldCutOffAPeerWhoseFrameCarriesAWrongTagAndServeTheOthers() throws Exception
    {
        try (RawPeer forger = RawPeer.connect(server.advertisedAddress(), TOKEN);
            RawPeer honest = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = forger.handle("decode");

            forger.readWithBadTag(4, handle, BASE, 100);

            assertThat(forger.closedByDaemon()).as("an unauthenticated frame disconnects its peer").isTrue();
            assertThat(counters.get(SystemCounter.REMOTE_BYTES_SENT).get()).as("nothing was read for it").isZero();
            honest.read(5, honest.handle("decode"), BASE, 100);
            assertThat(honest.ack()).containsExactly(5, TransferStatus.OK, 100);
        }
    }

    @Test
    void shouldCutOffAPeerAtTheForgedFrameOfAGatheredBurstLandingNothingAfterItAndServeTheOthers() throws Exception
    {
        try (RawPeer forger = RawPeer.connect(server.advertisedAddress(), TOKEN);
            RawPeer honest = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = forger.handle("decode");

            forger.send(
                forger.writeFrame(1, handle, BASE, 1000, 1000, (byte)1, true),
                forger.writeFrame(2, handle, BASE + 1000, 1000, 1000, (byte)2, false),
                forger.writeFrame(3, handle, BASE + 2000, 1000, 1000, (byte)3, true));

            assertThat(forger.okAnswersUntilClosed()).as("at most the frame before the forged one is answered")
                .isSubsetOf(1L);
            for (long i = 1000; i < SIZE; i++)
            {
                assertThat(memory.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(UNTOUCHED);
            }
            final long honestHandle = honest.handle("decode");
            honest.send(honest.writeFrame(4, honestHandle, BASE + 4096, 100, 100, (byte)4, true),
                honest.writeFrame(5, honestHandle, BASE + 8192, 100, 100, (byte)5, true));
            assertThat(honest.ack()).containsExactly(4, TransferStatus.OK, 0);
            assertThat(honest.ack()).containsExactly(5, TransferStatus.OK, 0);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 8192 + 99)).isEqualTo((byte)5);
        }
    }

    @Test
    void shouldAcknowledgeTheWholeWritesOfAGatheredBurstAndNeverTheOneCutShort() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");

            peer.send(
                peer.writeFrame(1, handle, BASE, 20_000, 20_000, (byte)1, true),
                peer.writeFrame(2, handle, BASE + 20_000, 20_000, 20_000, (byte)2, true),
                peer.writeFrame(3, handle, BASE + 40_000, 20_000, 12_345, (byte)3, true));
            peer.finishSending();

            assertThat(peer.okAnswersUntilClosed()).as("every whole WRITE, not the one cut short")
                .containsExactly(1L, 2L);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 19_999)).isEqualTo((byte)1);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 39_999)).isEqualTo((byte)2);
        }
    }

    @Test
    void shouldSendTheAnswersUpToASliceEndingItsRequestBeforeReadingTheNextRequestsSlice() throws Exception
    {
        // three slices in one write: the first half of request A, its second half (ending it: the initiator's client
        // waits for it), the first half of request B. Each pair of slices outgrows one read-ahead, so the channel
        // reads the socket in the middle of the second slice and before the third: the answers to A leave before
        // the third is read, the third's once nothing more is readable. Without the decision all three leave in one
        // write; taking every slice for an ending one sends each answer on its own. The 12 KiB write is one segment
        // on loopback, all readable when the first read wakes, but on a loaded machine it can reach the handler in
        // parts: a read then finds nothing more readable in the middle and sends A's first answer alone. Such an
        // attempt (more than two writes) is tried again on a new connection, a bounded number of times; one write
        // for all three fails at once.
        final int slice = BufferedChannel.READ_AHEAD / 2;
        final List<RawPeer> peers = new ArrayList<>(); // open to the end: a closed one's writes leave the count
        try
        {
            long writes = 0;
            for (int attempt = 0; attempt < BURST_ATTEMPTS && writes != 2; attempt++)
            {
                final RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN);
                peers.add(peer);
                final long handle = peer.handle("decode");
                final long before = server.answerWrites();

                peer.send(
                    peer.writeSliceFrame(1, handle, BASE, slice, BASE, 2 * slice, (byte)1),
                    peer.writeSliceFrame(2, handle, BASE + slice, slice, BASE, 2 * slice, (byte)2),
                    peer.writeSliceFrame(3, handle, BASE + 2 * slice, slice, BASE + 2 * slice, 2 * slice, (byte)3));

                assertThat(peer.ack()).containsExactly(1, TransferStatus.OK, 0);
                assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
                assertThat(peer.ack()).containsExactly(3, TransferStatus.OK, 0);
                writes = server.answerWrites() - before;
                assertThat(writes).as("A's ending answer waited for the third slice's read").isGreaterThan(1);
            }
            assertThat(writes).as("writes of answers: A's two, then B's first (in %d attempts)", BURST_ATTEMPTS)
                .isEqualTo(2);
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 3L * slice - 1)).isEqualTo((byte)3);
        }
        finally
        {
            for (final RawPeer peer : peers)
            {
                peer.close();
            }
        }
    }

    private void awaitLanded(final int bytes) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (memory.get(ValueLayout.JAVA_BYTE, bytes - 1) == UNTOUCHED && System.nanoTime() < deadline)
        {
            Thread.sleep(1);
        }
        assertThat(memory.get(ValueLayout.JAVA_BYTE, bytes - 1)).as("the WRITE's first bytes landed").isZero();
    }

    private void awaitReclaimable() throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!region.isReclaimable() && System.nanoTime() < deadline)
        {
            Thread.sleep(1);
        }
        assertThat(region.isReclaimable()).as("the stalled WRITE's borrow is released").isTrue();
    }
}
