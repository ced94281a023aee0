package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.Opcode;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The initiator's side of a TCP peer connection ({@link PeerConnection}, driven through {@link TcpTransport}), as a
 * specification: it connects and passes the handshake, keeps several slices of a request in flight, completes a READ
 * only when every byte arrived, sends no notification after a WRITE the target refused, fails a slice whose peer
 * stalls once it waited past the transfer timeout on the injected clock (and not before), sends a slice that failed
 * on one path again on another, and gives back every borrow when it closes. The peer is a {@link FakePeerServer} on 127.0.0.1:0 in this process (real sockets, no
 * daemon); the clock is a {@link CachedNanoClock} the test moves.
 */
@Timeout(60)
class PeerConnectionTest
{
    private static final String TOKEN = "peer-connection-test-token-0123456789abcdef";
    private static final int SLICE = 16 * 1024;
    private static final int LENGTH = 4 * SLICE;
    // also the real-time limit of a socket connect: generous, for a loaded machine
    private static final long TIMEOUT_MS = 20_000;
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
    private static final long START_NS = 1_000_000_000_000L;
    private static final long LOCAL_ADDRESS = 0x10_0000L;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final DaemonContext context = new DaemonContext().rpcAddress("127.0.0.1:1").sliceSize(SLICE)
        .transferTimeoutMs(TIMEOUT_MS).connectionsPerPeer(1).clusterToken(TOKEN);
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final Arena arena = Arena.ofShared();
    private final MemorySegment memory = arena.allocate(LENGTH, 4096);
    private final Region local = new Region(LOCAL_ADDRESS, LENGTH, "cpu:0", memory, memory);
    private final ClientSession submitter = new ClientSession(0, 1, "reader", "127.0.0.1:0/reader",
        (int)ProcessHandle.current().pid(), 0, 0, null, null, null, new ManyToOneRingBuffer(new UnsafeBuffer(
        ByteBuffer.allocateDirect(64 * 1024 + RingBufferDescriptor.TRAILER_LENGTH))), null);
    private final RemoteRequest request = new RemoteRequest();
    private final CompletionFlyweight completion = new CompletionFlyweight();
    private TcpTransport transport;
    private FakePeerServer peer;

    PeerConnectionTest()
    {
        clock.update(START_NS);
    }

    @AfterEach
    void close() throws Exception
    {
        if (transport != null)
        {
            transport.close();
        }
        if (peer != null)
        {
            peer.close();
        }
        arena.close();
    }

    @Test
    void shouldConnectHandshakeAndCompleteAReadOnlyWithEveryByteOfEverySliceInFlight() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.EXACT), LocalNics.resolve(List.of()));

        assertThat(read(1, open())).isEqualTo(TransferStatus.OK);

        for (int i = 0; i < LENGTH; i++)
        {
            assertThat(memory.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo((byte)i);
        }
        assertThat(peer.readsAnswered()).as("one answer per slice").isEqualTo(LENGTH / SLICE);
        assertThat(counters.get(SystemCounter.BYTES_READ).get()).isEqualTo(LENGTH);
    }

    @ParameterizedTest
    @EnumSource(value = FakePeerServer.ReadAnswer.class, names = {"EMPTY", "SHORT", "OVERSIZE"})
    void shouldFailAReadWhosePeerAnswersOkWithTheWrongNumberOfBytes(final FakePeerServer.ReadAnswer answer)
        throws Exception
    {
        start(new FakePeerServer(TOKEN, answer), LocalNics.resolve(List.of()));

        assertThat(read(2, open())).as("an OK answer of the wrong size is a transport error, never OK")
            .isEqualTo(TransferStatus.TRANSPORT_ERROR);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isZero();
        assertThat(counters.get(SystemCounter.BYTES_READ).get()).isZero();
    }

    @Test
    void shouldCompleteAReadWhosePeerAnswersItsSlicesNewestFirstWithEveryByteInItsSlice() throws Exception
    {
        assertThat(LENGTH / SLICE).as("one batch the peer reverses").isEqualTo(FakePeerServer.REVERSED_BATCH);
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.REVERSED), LocalNics.resolve(List.of()));

        assertThat(read(1, open())).isEqualTo(TransferStatus.OK);

        assertThat(peer.helloFlags() & PeerProtocol.FLAG_ANSWERS_BY_ID).as("offered in the HELLO").isNotZero();
        for (int i = 0; i < LENGTH; i++)
        {
            assertThat(memory.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i)
                .isEqualTo(FakePeerServer.unevenByte(i));
        }
        assertThat(peer.readsAnswered()).as("one answer per slice, on one connection").isEqualTo(LENGTH / SLICE);
        assertThat(counters.get(SystemCounter.BYTES_READ).get()).isEqualTo(LENGTH);
    }

    @ParameterizedTest
    @EnumSource(value = FakePeerServer.ReadAnswer.class, names = {"DUPLICATE", "UNKNOWN_ID"})
    void shouldFailAReadWhosePeerAnswersASliceTwiceOrOneNeverSent(final FakePeerServer.ReadAnswer answer)
        throws Exception
    {
        start(new FakePeerServer(TOKEN, answer), LocalNics.resolve(List.of()));

        assertThat(read(3, open())).as("an answer to no slice in flight breaks the connection: never OK")
            .isEqualTo(TransferStatus.TRANSPORT_ERROR);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isZero();
    }

    @Test
    void shouldNotSendTheNotificationOfAWriteTheTargetRefused() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.EXACT), LocalNics.resolve(List.of()));
        final long handle = open();
        final UnsafeBuffer notification = new UnsafeBuffer(new byte[] {'k', 'v', '-', 'r', 'e', 'a', 'd', 'y'});
        assertThat(submitter.tryAcquire()).isTrue();
        assertThat(local.tryAcquire()).isTrue();

        assertThat(transport.submit(request.reset()
            .submitter(submitter)
            .ids(6, 6)
            .opcode(Opcode.WRITE)
            .local(local, LOCAL_ADDRESS)
            .target(transport.remoteSegments().get(handle), FakePeerServer.BUFFER_ADDRESS)
            .length(LENGTH)
            .notification(notification, notification.capacity()))).isEqualTo(TransferStatus.OK);

        assertThat(awaitCompletion(6)).isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertThat(peer.notifiesReceived()).as("a refused WRITE notifies no one").isZero();
        assertThatBorrowsAreGivenBack();
    }

    @Test
    void shouldFailAStalledSliceOnlyOnceItWaitedPastTheTimeoutOnTheInjectedClock() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.NONE), LocalNics.resolve(List.of()));
        submitRead(3, open());
        awaitReadsReceived(1);

        clock.update(START_NS + TIMEOUT_NS);
        transport.checkTimeouts();
        assertThat(poll(3)).as("at the deadline the slice still waits").isEqualTo(-1);
        assertThat(counters.get(SystemCounter.SLICES_TIMED_OUT).get()).isZero();

        clock.update(START_NS + TIMEOUT_NS + 1);
        transport.checkTimeouts();
        assertThat(awaitCompletion(3)).as("past it the request fails").isEqualTo(TransferStatus.TRANSPORT_ERROR);
        assertThat(counters.get(SystemCounter.SLICES_TIMED_OUT).get()).isPositive();
        assertThatBorrowsAreGivenBack();
    }

    @Test
    void shouldGiveUpADescriptorFetchWhosePeerNeverAnswersOnlyPastTheTimeoutOnTheInjectedClock() throws Exception
    {
        // a listener that never accepts: the kernel completes the connect, the handshake waits for an answer forever
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0)))
        {
            start(null, LocalNics.resolve(List.of()));
            final CompletableFuture<Object> result = new CompletableFuture<>();
            transport.openAsync("127.0.0.1:" + silent.socket().getLocalPort(), "decode", result::complete);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (transport.fetchesUnderWay() == 0 && System.nanoTime() < deadline)
            {
                Thread.sleep(1);
            }
            assertThat(transport.fetchesUnderWay()).as("the fetch started").isEqualTo(1);

            clock.update(START_NS + TIMEOUT_NS);
            transport.checkTimeouts();
            assertThat(result.isDone()).as("at the deadline the fetch still waits").isFalse();
            assertThat(transport.fetchesUnderWay()).isEqualTo(1);

            clock.update(START_NS + TIMEOUT_NS + 1);
            transport.checkTimeouts();
            assertThat(result.get(20, TimeUnit.SECONDS)).as("past it the open fails, saying why")
                .asString().contains("did not answer within " + TIMEOUT_MS + " ms");
            assertThat(transport.fetchesUnderWay()).isZero();
            assertThat(transport.remoteSegments().get(Long.MIN_VALUE)).as("nothing opened").isNull();
            assertThat(transport.links()).as("no peer link").isEmpty();
        }
    }

    @Test
    void shouldNotTryToConnectAgainUntilTheBackOffHasEndedOnTheInjectedClock() throws Exception
    {
        // one path, 127.0.0.9 -> the peer's NIC "gone" at 127.0.0.9, where nothing listens (connection refused)
        start(FakePeerServer.withNics(TOKEN, List.of(new SegmentDescriptor.Nic("gone", "127.0.0.9"))),
            LocalNics.of(List.of(new LocalNics.Nic("dead", "127.0.0.9", 32))));
        final long handle = open();
        final var attempts = counters.get(SystemCounter.PEER_CONNECTION_FAILURES);

        submitRead(7, handle);
        assertThat(awaitCompletion(7)).isEqualTo(TransferStatus.TRANSPORT_ERROR);
        assertThat(attempts.get()).as("one attempt for the request's %d slices", LENGTH / SLICE).isEqualTo(1);

        clock.update(START_NS + PeerConnectionLifecycle.MIN_RECONNECT_DELAY_NS - 1);
        submitRead(8, handle);
        assertThat(awaitCompletion(8)).isEqualTo(TransferStatus.TRANSPORT_ERROR);
        assertThat(attempts.get()).as("1 ns before the back-off ends").isEqualTo(1);

        clock.update(START_NS + PeerConnectionLifecycle.MIN_RECONNECT_DELAY_NS);
        assertThat(read(9, handle)).isEqualTo(TransferStatus.TRANSPORT_ERROR);
        assertThat(attempts.get()).as("when it ends").isEqualTo(2);
    }

    @Test
    void shouldSendASliceThatFailedOnOnePathAgainOnAnother() throws Exception
    {
        // path "dead": 127.0.0.9 -> the peer's NIC "gone" at 127.0.0.9, where nothing listens (connection refused);
        // path "live": 127.0.0.1 -> the peer's RPC address
        start(FakePeerServer.withNics(TOKEN, List.of(new SegmentDescriptor.Nic("gone", "127.0.0.9"))),
            LocalNics.of(List.of(new LocalNics.Nic("dead", "127.0.0.9", 32), new LocalNics.Nic("live", "127.0.0.1", 32))));

        assertThat(read(4, open())).isEqualTo(TransferStatus.OK);

        assertThat(counters.get(SystemCounter.PEER_CONNECTION_FAILURES).get()).as("it did fail on the dead path")
            .isPositive();
        assertThat(peer.readsAnswered()).isEqualTo(LENGTH / SLICE);
        assertThat(memory.get(ValueLayout.JAVA_BYTE, LENGTH - 1)).isEqualTo((byte)(LENGTH - 1));
    }

    @Test
    void shouldFailWhatIsInFlightAndGiveBackEveryBorrowWhenItCloses() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.NONE), LocalNics.resolve(List.of()));
        submitRead(5, open());
        awaitReadsReceived(1);

        transport.close();

        assertThat(awaitCompletion(5)).as("no OK for bytes that never came").isNotEqualTo(TransferStatus.OK);
        assertThatBorrowsAreGivenBack();
    }

    @Test
    void shouldSendALoneReadFromTheSubmittingThreadWhileTheSenderSleeps() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.EXACT), LocalNics.resolve(List.of()));
        final long handle = open();
        submitRead(1, handle); // the sender thread connects: nothing was connected
        assertThat(awaitCompletion(1)).isEqualTo(TransferStatus.OK);
        final PeerConnection connection =
            ((PeerLink)transport.remoteSegments().get(handle).link()).paths()[0].connections()[0];
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!connection.isSenderAsleep() && System.nanoTime() < deadline)
        {
            Thread.sleep(1);
        }
        assertThat(connection.isSenderAsleep()).as("the sender sleeps on an empty queue").isTrue();
        memory.fill((byte)0);
        final long inlineBefore = connection.inlineSends();

        assertThat(read(2, handle)).isEqualTo(TransferStatus.OK);

        assertThat(connection.inlineSends()).as("the first slice left from the submitting thread")
            .isGreaterThan(inlineBefore);
        for (int i = 0; i < LENGTH; i++)
        {
            assertThat(memory.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo((byte)i);
        }
    }

    @Test
    void shouldKeepNoMoreBytesInFlightThanItsWindowToAPeerThatHasNotAnswered() throws Exception
    {
        // slices of 1 MiB: the window's bytes (4 MiB) shut it long before its 64 slices would
        final int slice = 1 << 20;
        final long length = 32L * slice;
        context.sliceSize(slice);
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.NONE), LocalNics.resolve(List.of()));
        final MemorySegment large = arena.allocate(length, 4096);
        final Region largeLocal = new Region(LOCAL_ADDRESS + LENGTH, length, "cpu:0", large, large);
        assertThat(submitter.tryAcquire()).isTrue();
        assertThat(largeLocal.tryAcquire()).isTrue();
        assertThat(transport.submit(request.reset()
            .submitter(submitter)
            .ids(8, 8)
            .opcode(Opcode.READ)
            .local(largeLocal, LOCAL_ADDRESS + LENGTH)
            .target(transport.remoteSegments().get(open()), FakePeerServer.BUFFER_ADDRESS)
            .length(length))).isEqualTo(TransferStatus.OK);

        final int window = (int)(PeerConnection.WINDOW_BYTES / slice); // whatever the 64 slices would allow
        awaitReadsReceived(window);
        Thread.sleep(200); // a sender that ignored the window's bytes would send the other 24 slices in this time
        assertThat(peer.readsReceived()).as("slices sent before any answer").isEqualTo(window);

        transport.close();
        assertThat(awaitCompletion(8)).as("no OK for bytes that never came").isNotEqualTo(TransferStatus.OK);
    }

    @Test
    void shouldAnswerEachMergedRequestOnItsOwnOnceEveryByteOfTheTransferArrived() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.EXACT), LocalNics.resolve(List.of()));

        submitMergedRead(open(), 11);
        final Map<Long, long[]> answered = awaitCompletions(4);

        assertThat(answered).containsOnlyKeys(11L, 12L, 13L, 14L);
        assertThat(answered.values()).allSatisfy(a ->
            assertThat(a).as("status, bytes").containsExactly(TransferStatus.OK, SLICE));
        for (int i = 0; i < LENGTH; i++)
        {
            assertThat(memory.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo((byte)i);
        }
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isEqualTo(4);
        assertThat(counters.get(SystemCounter.BYTES_READ).get()).isEqualTo(LENGTH);
        assertThatBorrowsAreGivenBack();
    }

    @Test
    void shouldCountRequestsInFlightAsAnsweredOnItsOwnUntilTheirCompletionsAreWritten() throws Exception
    {
        // what lets intake sleep on its clients' doorbells while these are in flight: it must never count one that
        // is over (intake could then sleep through a local request), and count each merged request
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.NONE), LocalNics.resolve(List.of()));
        final long handle = open();
        submitRead(3, handle);
        awaitReadsReceived(1);
        assertThat(transport.requestsAnsweredOnItsOwn()).as("a stalled READ").isEqualTo(1);
        submitMergedRead(handle, 31);
        awaitReadsReceived(2);
        assertThat(transport.requestsAnsweredOnItsOwn()).as("and four merged in one transfer").isEqualTo(5);

        transport.close(); // fails what is in flight

        assertThat(awaitCompletions(5)).containsOnlyKeys(3L, 31L, 32L, 33L, 34L);
        assertThat(transport.requestsAnsweredOnItsOwn()).as("uncounted before their completions were written")
            .isZero();
    }

    @Test
    void shouldNotCountAnEntryOfABatchThatHoldsBackItsLastEntry() throws Exception
    {
        // intake publishes the held-back entry once the others landed: it must stay awake while they are in flight
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.NONE), LocalNics.resolve(List.of()));
        final long handle = open();
        final io.xferd.daemon.session.BatchTracker batch = new io.xferd.daemon.session.BatchTracker(
            new ManyToOneConcurrentArrayQueue<>(1), new ManyToOneConcurrentArrayQueue<>(1));
        batch.begin(submitter, 41, Opcode.READ, 2, handle, 0, 1, 2);
        batch.holdsBackLast = true;
        assertThat(submitter.tryAcquire()).isTrue();
        assertThat(local.tryAcquire()).isTrue();
        assertThat(transport.submit(request.reset()
            .submitter(submitter)
            .ids(41, 41)
            .batch(batch, 0)
            .opcode(Opcode.READ)
            .local(local, LOCAL_ADDRESS)
            .target(transport.remoteSegments().get(handle), FakePeerServer.BUFFER_ADDRESS)
            .length(LENGTH))).isEqualTo(TransferStatus.OK);
        awaitReadsReceived(1);

        assertThat(transport.requestsAnsweredOnItsOwn()).isZero();
    }

    @Test
    void shouldFailEachMergedRequestWhenTheTransferFails() throws Exception
    {
        start(new FakePeerServer(TOKEN, FakePeerServer.ReadAnswer.EMPTY), LocalNics.resolve(List.of()));

        submitMergedRead(open(), 21);
        final Map<Long, long[]> answered = awaitCompletions(4);

        assertThat(answered).containsOnlyKeys(21L, 22L, 23L, 24L);
        assertThat(answered.values()).allSatisfy(a ->
            assertThat(a).as("status, bytes").containsExactly(TransferStatus.TRANSPORT_ERROR, 0));
        assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isEqualTo(4);
        assertThat(counters.get(SystemCounter.REQUESTS_COMPLETED).get()).isZero();
        assertThatBorrowsAreGivenBack();
    }

    /**
     * One READ of the whole buffer carrying four merged requests of a slice each, ids {@code firstId}...
     */
    private void submitMergedRead(final long handle, final long firstId)
    {
        final io.xferd.daemon.transport.CoalescedRequests members = new io.xferd.daemon.transport.CoalescedRequests();
        for (int i = 0; i < 4; i++)
        {
            members.add(firstId + i, null, 0, SLICE, 1, 2);
        }
        assertThat(submitter.tryAcquire()).isTrue();
        assertThat(local.tryAcquire()).isTrue();
        assertThat(transport.submit(request.reset()
            .submitter(submitter)
            .ids(firstId, 5)
            .opcode(Opcode.READ)
            .local(local, LOCAL_ADDRESS)
            .target(transport.remoteSegments().get(handle), FakePeerServer.BUFFER_ADDRESS)
            .length(LENGTH)
            .members(members))).isEqualTo(TransferStatus.OK);
    }

    /**
     * @return request id -> (status, bytes) of the first {@code count} completions.
     */
    private Map<Long, long[]> awaitCompletions(final int count)
    {
        final Map<Long, long[]> answered = new java.util.TreeMap<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (answered.size() < count && System.nanoTime() < deadline)
        {
            submitter.completionRing().read((type, buffer, index, length) ->
            {
                completion.wrap(buffer, index);
                answered.put(completion.requestId(), new long[] {completion.status(), completion.bytesTransferred()});
            });
            Thread.onSpinWait();
        }
        return answered;
    }

    private void start(final FakePeerServer peer, final LocalNics nics)
    {
        this.peer = peer;
        transport = new TcpTransport(context, counters, new ManyToOneConcurrentArrayQueue<>(4), nics,
            PeerAuthenticator.of(context, 5), clock);
    }

    private long open() throws Exception
    {
        final CompletableFuture<Object> result = new CompletableFuture<>();
        transport.openAsync(peer.address(), "decode", result::complete);
        final Object opened = result.get(20, TimeUnit.SECONDS);
        assertThat(opened).isInstanceOf(Long.class);
        return (Long)opened;
    }

    /**
     * Submit as the transfer worker does: it borrows the submitter and the local region first.
     */
    private void submitRead(final long requestId, final long handle)
    {
        assertThat(submitter.tryAcquire()).isTrue();
        assertThat(local.tryAcquire()).isTrue();
        assertThat(transport.submit(request.reset()
            .submitter(submitter)
            .ids(requestId, requestId)
            .opcode(Opcode.READ)
            .local(local, LOCAL_ADDRESS)
            .target(transport.remoteSegments().get(handle), FakePeerServer.BUFFER_ADDRESS)
            .length(LENGTH))).isEqualTo(TransferStatus.OK);
    }

    private int read(final long requestId, final long handle)
    {
        submitRead(requestId, handle);
        final int status = awaitCompletion(requestId);
        assertThatBorrowsAreGivenBack();
        return status;
    }

    private int awaitCompletion(final long requestId)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int status;
        while ((status = poll(requestId)) < 0 && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertThat(status).as("completion of request %d", requestId).isNotNegative();
        return status;
    }

    /**
     * @return the status of request {@code requestId}'s completion if one is in the ring now, else -1.
     */
    private int poll(final long requestId)
    {
        final int[] status = {-1};
        submitter.completionRing().read((type, buffer, index, length) ->
        {
            completion.wrap(buffer, index);
            if (completion.requestId() == requestId)
            {
                status[0] = completion.status();
            }
        });
        return status[0];
    }

    private void awaitReadsReceived(final int reads) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (peer.readsReceived() < reads && System.nanoTime() < deadline)
        {
            Thread.sleep(1);
        }
        assertThat(peer.readsReceived()).as("READs the peer took").isGreaterThanOrEqualTo(reads);
    }

    private void assertThatBorrowsAreGivenBack()
    {
        local.markClosed();
        submitter.markClosed();
        // the transport writes the completion, then gives the borrows back: the test may see the first before the rest
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!(local.isReclaimable() && submitter.isReclaimable()) && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertThat(local.isReclaimable()).as("the local region's borrow is given back").isTrue();
        assertThat(submitter.isReclaimable()).as("the submitter's borrow is given back").isTrue();
    }
}
