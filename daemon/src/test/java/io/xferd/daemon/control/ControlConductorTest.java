package io.xferd.daemon.control;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.SystemCounter;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control conductor as Aeron tests its DriverConductor: one thread, the test's, calls {@code doWork()}; time is
 * a {@link CachedEpochClock} the test moves. Its clients are real Unix sockets in this process (no daemon, no child
 * process, no sleep): the conductor parks at most a few ms in poll(2) per cycle, and every wait is a bounded number
 * of cycles.
 */
@Timeout(20)
class ControlConductorTest
{
    private static final long HELLO_TIMEOUT_MS = 1_000;
    private static final long START_MS = 1_000_000;
    private static final int MAX_CYCLES = 200;
    private static final int FUZZ_CASES = Integer.getInteger("xferd.fuzz.unit.cases", 300);
    private static final int[] FUZZ_EDGE_INTS = {0, -1, 1, 7, 8, 9, 4095, 4096, 4097, Integer.MAX_VALUE,
        Integer.MIN_VALUE};

    private final Path directory = newDirectory();
    private final RuntimeDirectory runtime = RuntimeDirectory.claim(directory, 1_000);
    private final UnsafeBuffer cnc = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
    private final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    private final SystemCounters counters = new SystemCounters(countersManager);
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(16);
    private final SessionTable registry = new SessionTable(4);
    private final CachedEpochClock clock = new CachedEpochClock();
    private final DaemonContext context = new DaemonContext().rpcAddress("127.0.0.1:7").helloTimeoutMs(HELLO_TIMEOUT_MS)
        .maxClients(4);
    private final ControlConductor conductor;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment frameMemory = arena.allocate(ControlFrame.MAX_FRAME_LENGTH, 8);
    private final UnsafeBuffer frameBuffer = new UnsafeBuffer(frameMemory.address(), ControlFrame.MAX_FRAME_LENGTH);

    ControlConductorTest()
    {
        clock.update(START_MS);
        conductor = new ControlConductor(context, runtime, registry, cnc, disconnects, counters, clock, null, null);
    }

    @AfterEach
    void close() throws IOException
    {
        conductor.disconnectAll("test over");
        for (int i = 0; i < MAX_CYCLES && !conductor.isQuiescent(); i++)
        {
            conductor.doWork();
        }
        conductor.close();
        runtime.close();
        arena.close();
        try (var files = Files.walk(directory))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    private static Path newDirectory()
    {
        try
        {
            return Files.createTempDirectory("xferd-conductor-");
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    private UnixSocket connect()
    {
        final UnixSocket socket = UnixSocket.connect(runtime.socketPath());
        socket.configureBlocking(false);
        return socket;
    }

    private void sayHello(final UnixSocket socket, final String name)
    {
        final ControlFrame frame = new ControlFrame().wrap(frameBuffer, 0).begin(ControlMessages.HELLO)
            .putInt(ControlMessages.HELLO_VERSION, ControlMessages.PROTOCOL_VERSION)
            .putInt(ControlMessages.HELLO_PID, 1)
            .putInt(ControlMessages.HELLO_FLAGS, 0)
            .putInt(ControlMessages.HELLO_FLAGS + 4, 0)
            .putString(ControlMessages.HELLO_NAME, name);
        assertThat(socket.send(frameMemory, 0, frame.length())).isEqualTo(frame.length());
    }

    /**
     * Run the conductor until the client has a whole answer; closes the descriptor that came with it.
     *
     * @return the answer's type.
     */
    private int awaitAnswer(final UnixSocket socket)
    {
        return awaitAnswer(conductor, socket);
    }

    private int awaitAnswer(final ControlConductor conductor, final UnixSocket socket)
    {
        final int[] fd = {-1};
        int received = 0;
        for (int i = 0; i < MAX_CYCLES; i++)
        {
            conductor.doWork();
            final int n = socket.receiveWithFd(frameMemory, received, ControlFrame.MAX_FRAME_LENGTH - received, fd);
            if (fd[0] >= 0)
            {
                Memfd.close(fd[0]);
                fd[0] = -1;
            }
            assertThat(n).as("the conductor answers before it closes").isNotZero();
            received += Math.max(0, n);
            if (received >= ControlFrame.HEADER_LENGTH && received >= ControlFrame.frameLength(frameBuffer, 0))
            {
                return new ControlFrame().wrap(frameBuffer, 0).type();
            }
        }
        throw new AssertionError("no answer within " + MAX_CYCLES + " duty cycles");
    }

    private ClientSession welcome(final UnixSocket socket, final String name)
    {
        sayHello(socket, name);
        assertThat(awaitAnswer(socket)).isEqualTo(ControlMessages.WELCOME);
        final ClientSession session = registry.byName(name);
        assertThat(session).isNotNull();
        return session;
    }

    private void doWorkUntil(final BooleanSupplier condition, final String what)
    {
        for (int i = 0; i < MAX_CYCLES; i++)
        {
            if (condition.getAsBoolean())
            {
                return;
            }
            conductor.doWork();
        }
        throw new AssertionError("not within " + MAX_CYCLES + " duty cycles: " + what);
    }

    private boolean isClosedByConductor(final UnixSocket socket)
    {
        return socket.receive(frameMemory, 0, ControlFrame.MAX_FRAME_LENGTH) == 0;
    }

    @Test
    void shouldWriteTheHeartbeatFromTheInjectedClockEveryCycle()
    {
        assertThat(CncFileDescriptor.heartbeatMs(cnc)).as("at construction").isEqualTo(START_MS);

        clock.update(START_MS + 42);
        conductor.doWork();

        assertThat(CncFileDescriptor.heartbeatMs(cnc)).isEqualTo(START_MS + 42);
    }

    @Test
    void shouldCloseAConnectionThatNeverSaysHelloOnlyOnceTheDeadlinePassed()
    {
        try (UnixSocket silent = connect())
        {
            conductor.doWork(); // accepted now, at START_MS
            conductor.doWork();

            clock.update(START_MS + HELLO_TIMEOUT_MS);
            conductor.doWork();
            assertThat(isClosedByConductor(silent)).as("still within its deadline").isFalse();

            clock.update(START_MS + HELLO_TIMEOUT_MS + 1);
            conductor.doWork();
            assertThat(isClosedByConductor(silent)).as("closed once the clock passed the deadline").isTrue();
            assertThat(conductor.clientCount()).isZero();
        }
    }

    @Test
    void shouldKeepAClientThatSaidHelloHoweverLongItThenStaysSilent()
    {
        try (UnixSocket client = connect())
        {
            final ClientSession session = welcome(client, "prefill");

            clock.update(START_MS + 100 * HELLO_TIMEOUT_MS);
            conductor.doWork();
            conductor.doWork();

            assertThat(isClosedByConductor(client)).isFalse();
            assertThat(conductor.clientCount()).isEqualTo(1);
            assertThat(registry.segment(session.segmentHandle())).isSameAs(session);
            assertThat(counters.get(SystemCounter.CLIENTS_CONNECTED).get()).isEqualTo(1);
        }
    }

    @Test
    void shouldFreeAClientWhoseSocketClosesOnceNoTransferBorrowsIt()
    {
        final UnixSocket client = connect();
        final ClientSession session = welcome(client, "decode");
        assertThat(session.tryAcquire()).as("a transfer of this client is in flight").isTrue();

        client.close();
        doWorkUntil(() -> conductor.clientCount() == 0, "the closed socket is noticed");

        assertThat(registry.byName("decode")).as("its name is free at once").isNull();
        assertThat(registry.inSlot(session.slot())).isNull();
        assertThat(session.isClosed()).isTrue();
        assertThat(counters.get(SystemCounter.CLIENTS_DISCONNECTED).get()).isEqualTo(1);
        conductor.doWork();
        assertThat(conductor.isQuiescent()).as("its rings stay mapped while borrowed").isFalse();

        session.release();
        doWorkUntil(conductor::isQuiescent, "its rings are unmapped once the borrow is given back");
        assertThat(session.isReclaimable()).isTrue();
    }

    @Test
    void shouldCutOffAClientTheDataPlaneReportsAndKeepServingTheOthers()
    {
        try (UnixSocket bad = connect(); UnixSocket good = connect())
        {
            final ClientSession badSession = welcome(bad, "bad");
            final ClientSession goodSession = welcome(good, "good");

            badSession.protocolViolation("its submit ring broke the protocol: test");
            disconnects.offer(badSession);
            doWorkUntil(() -> conductor.clientCount() == 1, "the reported client is cut off");

            assertThat(isClosedByConductor(bad)).isTrue();
            assertThat(counters.get(SystemCounter.CLIENTS_CUT_OFF).get()).isEqualTo(1);
            assertThat(registry.byName("good")).isSameAs(goodSession);
            assertThat(isClosedByConductor(good)).isFalse();
            doWorkUntil(conductor::isQuiescent, "the cut-off client's rings are unmapped");
        }
    }

    @Test
    void shouldRefuseASecondClientWithTheSameSegmentName()
    {
        try (UnixSocket first = connect(); UnixSocket second = connect())
        {
            welcome(first, "same");
            sayHello(second, "same");

            assertThat(awaitAnswer(second)).isEqualTo(ControlMessages.ERROR);
            doWorkUntil(() -> isClosedByConductor(second), "the refused connection is closed");
            assertThat(conductor.clientCount()).isEqualTo(1);
        }
    }

    /**
     * The conductor's decoding, fuzzed without a process: seeded frames with random lengths, types, fields and
     * bytes, before and after HELLO, each on its own connection. Whatever arrives, {@code doWork()} never throws,
     * each connection gets an answer frame or is closed (or waits for the rest of a frame it was promised), its
     * session is freed, and an honest client is welcomed after every few cases.
     * {@code -Dxferd.test.seed=N} replays a run; a failure names its case's seed.
     */
    @Test
    @Timeout(180)
    void shouldAnswerOrCloseEveryRandomFrameAndKeepWelcomingHonestClients()
    {
        final long seed = Long.getLong("xferd.test.seed", 0x5EED_C0DEL);
        final Random random = new Random(seed);
        final int[] outcomes = new int[3]; // answered, closed, waiting for more
        for (int i = 0; i < FUZZ_CASES; i++)
        {
            final long caseSeed = random.nextLong();
            try
            {
                outcomes[fuzzCase(new Random(caseSeed), i)]++;
                if (i % 25 == 24)
                {
                    try (UnixSocket honest = connect())
                    {
                        welcome(honest, "honest-" + i);
                    }
                    doWorkUntil(() -> conductor.clientCount() == 0, "the honest client is freed");
                }
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError("case " + i + " (seed " + caseSeed + "): " + ex.getMessage(), ex);
            }
        }
        assertThat(outcomes[0]).as("answered").isPositive();
        assertThat(outcomes[1]).as("closed").isPositive();
    }

    /**
     * @return 0 answered, 1 closed by the conductor, 2 still waiting for the rest of a frame.
     */
    private int fuzzCase(final Random random, final int index)
    {
        try (UnixSocket socket = connect())
        {
            if (random.nextBoolean())
            {
                welcome(socket, "fuzz-" + index);
            }
            final int body = random.nextInt(ControlFrame.MAX_FRAME_LENGTH - ControlFrame.HEADER_LENGTH + 1);
            final byte[] bytes = new byte[ControlFrame.HEADER_LENGTH + body];
            random.nextBytes(bytes);
            final UnsafeBuffer frame = new UnsafeBuffer(bytes);
            final int length = switch (random.nextInt(4))
            {
                case 0 -> bytes.length;
                case 1 -> bytes.length + random.nextInt(64) - 32;
                case 2 -> FUZZ_EDGE_INTS[random.nextInt(FUZZ_EDGE_INTS.length)];
                default -> frame.getInt(0);
            };
            frame.putInt(0, length);
            frame.putInt(4, switch (random.nextInt(3))
            {
                case 0 -> 1 + random.nextInt(6); // HELLO and every request type
                case 1 -> 100 + random.nextInt(5);
                default -> frame.getInt(4);
            });
            if (random.nextInt(4) == 0 && bytes.length >= 28)
            {
                frame.putInt(8, ControlMessages.PROTOCOL_VERSION); // past the version check, into the fields
            }
            frameBuffer.putBytes(0, bytes);
            assertThat(socket.send(frameMemory, 0, bytes.length)).as("sent at once").isEqualTo(bytes.length);
            final int[] fd = {-1};
            int received = 0;
            for (int cycle = 0; cycle < 20; cycle++)
            {
                conductor.doWork();
                final int n = socket.receiveWithFd(frameMemory, received, ControlFrame.MAX_FRAME_LENGTH - received, fd);
                if (fd[0] >= 0)
                {
                    Memfd.close(fd[0]);
                    fd[0] = -1;
                }
                if (n == 0)
                {
                    return 1;
                }
                received += Math.max(0, n);
                if (received >= ControlFrame.HEADER_LENGTH && received >= ControlFrame.frameLength(frameBuffer, 0))
                {
                    final int type = new ControlFrame().wrap(frameBuffer, 0).type();
                    assertThat(type).isIn(ControlMessages.OK, ControlMessages.ERROR, ControlMessages.WELCOME);
                    return 0;
                }
            }
            return 2;
        }
        finally
        {
            doWorkUntil(() -> conductor.clientCount() == 0, "the fuzzed connection is freed");
        }
    }

    @Test
    void shouldHousekeepWithinTheWatchdogsBoundEvenWhenQuiet() throws Exception
    {
        // a conductor whose quiet poll would last a minute, capped at 100 ms as WatchdogSec=400ms caps it
        final Path otherDirectory = newDirectory();
        final RuntimeDirectory otherRuntime = RuntimeDirectory.claim(otherDirectory, 1_000);
        final ControlConductor quiet = new ControlConductor(context, otherRuntime, new SessionTable(4),
            new UnsafeBuffer(ByteBuffer.allocateDirect(4096)), new ManyToOneConcurrentArrayQueue<>(16), counters,
            clock, null, null, 60_000);
        quiet.quietPollAtMost(100);
        final ExecutorService conductorThread = Executors.newSingleThreadExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "quiet-conductor");
            thread.setDaemon(true); // uncapped, it sits in its poll for the minute after the test failed
            return thread;
        });
        try
        {
            for (int i = 0; i < ControlConductor.QUIET_CYCLES; i++)
            {
                quiet.doWork(); // nothing to do: the conductor goes quiet
            }
            assertThat(conductorThread.submit(quiet::doWork).get(10, TimeUnit.SECONDS))
                .as("a quiet cycle ends with the cap, not the minute").isZero();
        }
        finally
        {
            conductorThread.shutdownNow();
            quiet.close();
            otherRuntime.close();
            try (var files = Files.walk(otherDirectory))
            {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Test
    void shouldRunATaskQueuedByAnotherThreadAtOnceEvenInAQuietPoll() throws Exception
    {
        // a conductor whose quiet poll lasts a minute: only a socket event or its task bell ends that wait
        final AtomicReference<Consumer<Object>> pendingOpen = new AtomicReference<>();
        final Path otherDirectory = newDirectory();
        final RuntimeDirectory otherRuntime = RuntimeDirectory.claim(otherDirectory, 1_000);
        final ControlConductor quiet = new ControlConductor(context, otherRuntime, new SessionTable(4),
            new UnsafeBuffer(ByteBuffer.allocateDirect(4096)), new ManyToOneConcurrentArrayQueue<>(16), counters,
            clock, new OpenOnlyTransport(pendingOpen), null, 60_000);
        // a daemon thread: with the bell broken it sits in its poll until the timeout, after the test failed
        final ExecutorService conductorThread = Executors.newSingleThreadExecutor(runnable ->
        {
            final Thread thread = new Thread(runnable, "quiet-conductor");
            thread.setDaemon(true);
            return thread;
        });
        try (UnixSocket client = UnixSocket.connect(otherRuntime.socketPath()))
        {
            client.configureBlocking(false);
            sayHello(client, "opener");
            assertThat(awaitAnswer(quiet, client)).isEqualTo(ControlMessages.WELCOME);

            final ControlFrame open = new ControlFrame().wrap(frameBuffer, 0).begin(ControlMessages.OPEN_SEGMENT)
                .putLong(ControlMessages.CORRELATION_ID, 77)
                .putString(ControlMessages.OPEN_SEGMENT_NAME, "127.0.0.9:9/remote");
            assertThat(client.send(frameMemory, 0, open.length())).isEqualTo(open.length());
            for (int i = 0; i < MAX_CYCLES && pendingOpen.get() == null; i++)
            {
                quiet.doWork();
            }
            assertThat(pendingOpen.get()).as("the open went to the transport").isNotNull();
            for (int i = 0; i < ControlConductor.QUIET_CYCLES; i++)
            {
                quiet.doWork(); // nothing to do: the conductor goes quiet
            }

            // the transport answers from its own thread while the conductor waits in its quiet poll (or is about to)
            final Future<Integer> cycle = conductorThread.submit(quiet::doWork);
            pendingOpen.get().accept(42L);
            assertThat(cycle.get(10, TimeUnit.SECONDS)).as("the queued answer counted as work").isPositive();

            final int received = client.receive(frameMemory, 0, ControlFrame.MAX_FRAME_LENGTH);
            assertThat(received).isPositive();
            final ControlFrame answer = new ControlFrame().wrap(frameBuffer, 0);
            assertThat(answer.type()).isEqualTo(ControlMessages.OK);
            assertThat(answer.getLong(ControlMessages.CORRELATION_ID)).isEqualTo(77);
            assertThat(answer.getLong(8)).as("the handle the transport opened").isEqualTo(42);
        }
        finally
        {
            conductorThread.shutdownNow();
            quiet.disconnectAll("test over");
            for (int i = 0; i < MAX_CYCLES && !quiet.isQuiescent(); i++)
            {
                quiet.doWork();
            }
            quiet.close();
            otherRuntime.close();
            try (var files = Files.walk(otherDirectory))
            {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    /** A transport that only records the answer callback of the one open it is asked for. */
    private record OpenOnlyTransport(AtomicReference<Consumer<Object>> pendingOpen) implements PeerTransport
    {
        @Override
        public String name()
        {
            return "test";
        }

        @Override
        public void journal(final TransferJournal journal)
        {
        }

        @Override
        public RemoteSegments remoteSegments()
        {
            return null;
        }

        @Override
        public int submit(final RemoteRequest request)
        {
            throw new UnsupportedOperationException("no transfers in this test");
        }

        @Override
        public void openAsync(final String peerAddress, final String segmentName, final Consumer<Object> onResult)
        {
            pendingOpen.set(onResult);
        }

        @Override
        public void close()
        {
        }
    }
}
