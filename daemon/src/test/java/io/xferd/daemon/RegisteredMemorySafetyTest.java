package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Registered memory cannot vanish under a copy, against a daemon in its own process: a range larger than its
 * memfd, or a memfd not sealed against shrinking, is refused with a typed error; a file that cannot be sealed and
 * shrinks anyway fails the one copy that faults, its owner is cut off, and an honest client in another process
 * keeps completing verified transfers while the heartbeat advances; an unregister is answered only once the copy
 * that borrows the range is over (a local copy, or another daemon's READ), with every byte in place.
 */
@Tag("integration")
@Timeout(300)
class RegisteredMemorySafetyTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;
    private static final Duration REACTS_WITHIN = Duration.ofSeconds(30);

    private static Path directory;
    private static ChildProcess daemon;
    private static HonestWitness honest;
    private static int clients;

    @BeforeAll
    static void startDaemonAndHonestClient()
    {
        directory = SystemTests.newDaemonDirectory();
        // one slice per remote request of up to 64 MiB, so that a READ holds the owner's range all the while
        daemon = ChildProcess.start("daemon", XferdMain.class, "daemon", "--dir", directory.toString(),
            "--rpc-address", "127.0.0.1:0", "--metrics-address", "off", "--slice-size", Long.toString(64 * MIB),
            "--liveness-timeout-ms", "30000", // stopped for a moment by one test: not gone to its clients
            "--cluster-token-file", SystemTests.clusterTokenFile(directory).toString());
        daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        honest = HonestWitness.start(directory, WAIT);
    }

    @AfterAll
    static void stopEverything()
    {
        if (honest != null)
        {
            honest.close();
        }
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldRefuseARangeBeyondItsMemfdAndAMemfdThatCanShrink()
    {
        try (RawControlSession client = RawControlSession.hello(directory, "sizes-" + clients++, WAIT);
            SharedFile small = SharedFile.sealedMemfd(4 * KIB);
            SharedFile unsealed = SharedFile.unsealedMemfd(64 * KIB))
        {
            assertThat(register(client, small, 1, MIB)).as("1 MiB over a 4 KiB memfd").isEqualTo("BEYOND_END_OF_FILE");
            assertThat(register(client, small, 4 * KIB - 8, 4 * KIB)).as("offset + length past the end")
                .isEqualTo("BEYOND_END_OF_FILE");
            assertThat(register(client, unsealed, 0, 64 * KIB)).as("a memfd made without MFD_ALLOW_SEALING")
                .isEqualTo("MEMORY_NOT_SEALED");
            assertThat(register(client, small, 0, 4 * KIB)).as("the same client, a range that fits").isEqualTo("OK");
        }
        honest.assertRound();
    }

    @Test
    void shouldFailACopyFromAShrunkFileCutOffItsOwnerAndKeepServingEveryoneElse() throws Exception
    {
        final long length = 64 * MIB;
        final long faultsBefore = SystemTests.cncCounter(directory, SystemCounter.MEMORY_FAULTS);
        final long heartbeatBefore = honest.heartbeatMs();
        try (RawControlSession shrinker = RawControlSession.hello(directory, "shrinker-" + clients++, WAIT);
            SharedFile file = SharedFile.tmpfsFile(length);
            SharedFile target = SharedFile.sealedMemfd(length))
        {
            file.memory.fill((byte)7);
            assertThat(register(shrinker, file, 0, length)).as("a tmpfs file cannot be sealed: size-checked only")
                .isEqualTo("OK");
            assertThat(register(shrinker, target, 0, length)).isEqualTo("OK");
            file.shrinkTo(4 * KIB); // the daemon's mapping of the other 63.99 MiB is gone: touching it is SIGBUS

            final long requestId = submit(shrinker, Opcode.WRITE, shrinker.segmentHandle(), file.address(),
                target.address(), length);

            final long[] completion = shrinker.awaitCompletion(requestId, REACTS_WITHIN);
            assertThat(TransferStatus.name((int)completion[0])).isEqualTo("MEMORY_FAULT");
            assertThat(completion[1]).isZero();
            assertThat(shrinker.awaitClosedByDaemon(REACTS_WITHIN)).as("the owner of the shrunk file is cut off")
                .isTrue();
        }
        assertThat(SystemTests.cncCounter(directory, SystemCounter.MEMORY_FAULTS)).isEqualTo(faultsBefore + 1);
        honest.assertRound();
        honest.assertHeartbeatAdvancesPast(heartbeatBefore);
        assertThat(daemon.isAlive()).isTrue();
    }

    /**
     * The daemon unmaps an unregistered range only when no copy borrows it, and answers only then: the client may
     * reuse its memory as soon as it reads OK. Tried until one UNREGISTER left while the copy was under way (the
     * target's first byte written, its last not yet).
     */
    @Test
    void shouldAnswerAnUnregisterOnlyAfterTheCopyThatBorrowsTheRangeWithEveryByteInPlace()
    {
        final long length = 256 * MIB;
        int overlapped = 0;
        try (RawControlSession client = RawControlSession.hello(directory, "unregister-" + clients++, WAIT);
            SharedFile source = SharedFile.sealedMemfd(length))
        {
            SystemTests.fill(source.memory, 0x5EED);
            source.memory.set(ValueLayout.JAVA_BYTE, 0, (byte)1);
            source.memory.set(ValueLayout.JAVA_BYTE, length - 1, (byte)1);
            assertThat(register(client, source, 0, length)).isEqualTo("OK");
            for (int attempt = 0; attempt < 8 && overlapped == 0; attempt++)
            {
                try (SharedFile target = SharedFile.sealedMemfd(length))
                {
                    assertThat(register(client, target, 0, length)).isEqualTo("OK");
                    final long requestId = submit(client, Opcode.WRITE, client.segmentHandle(), source.address(),
                        target.address(), length);
                    final long deadline = System.nanoTime() + REACTS_WITHIN.toNanos();
                    while (target.memory.get(ValueLayout.JAVA_BYTE, 0) == 0 && System.nanoTime() < deadline)
                    {
                        Thread.onSpinWait(); // the copy has begun once the first byte lands
                    }
                    client.send(frame -> frame.begin(ControlMessages.UNREGISTER_MEMORY)
                        .putLong(ControlMessages.CORRELATION_ID, 2)
                        .putLong(ControlMessages.UNREGISTER_ADDRESS, target.address()), WAIT);
                    final boolean underWay = target.memory.get(ValueLayout.JAVA_BYTE, length - 1) == 0;
                    final ControlFrame answer = client.answer(WAIT);
                    final int type = answer.type();
                    // read at once: when OK arrived, the daemon must be done with these bytes
                    final long mismatch = MemorySegment.mismatch(source.memory, 0, length, target.memory, 0, length);

                    assertThat(type).as("UNREGISTER answered OK").isEqualTo(ControlMessages.OK);
                    assertThat(mismatch).as("every byte in place when the answer came").isEqualTo(-1);
                    final long[] completion = client.awaitCompletion(requestId, WAIT);
                    assertThat(TransferStatus.name((int)completion[0])).isEqualTo("OK");
                    assertThat(completion[1]).isEqualTo(length);
                    overlapped += underWay ? 1 : 0;
                }
            }
            assertThat(client.isOpenedByDaemon()).isTrue();
        }
        assertThat(overlapped).as("at least one UNREGISTER arrived during its copy").isPositive();
        honest.assertRound();
        assertThat(daemon.isAlive()).isTrue();
    }

    /**
     * As above, for a READ from another daemon: the owner's daemon holds the range while it sends the slice (one
     * slice of the whole request here, {@code --slice-size} 64 MiB), and answers the owner's UNREGISTER only once the
     * bytes have left; the reader gets every one of them. To hold the owner's daemon in the middle of sending for
     * sure, the reader's daemon is stopped (SIGSTOP) once the first bytes arrived: with 40 MiB and more still unsent
     * and at most 36 MiB of socket buffers on loopback, the owner's daemon cannot finish until it runs again, so no
     * answer may come meanwhile.
     */
    @Test
    void shouldAnswerAnUnregisterOnlyAfterARemoteReadThatHoldsTheRangeHasSentIt()
    {
        final long length = 64 * MIB;
        final Path ownerDirectory = SystemTests.newDaemonDirectory();
        int overlapped = 0;
        try (ChildProcess ownerDaemon = ChildProcess.start("owner-daemon", XferdMain.class, "daemon", "--dir",
            ownerDirectory.toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "off",
            "--cluster-token-file", SystemTests.clusterTokenFile(directory).toString()))
        {
            final String listener = ownerDaemon.awaitLine("peer listener on ", WAIT);
            final String ownerAddress = listener.substring(listener.indexOf("peer listener on ") + 17).split(" ")[0];
            ownerDaemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
            try (RawControlSession owner = RawControlSession.hello(ownerDirectory, "owner", WAIT);
                RawControlSession reader = RawControlSession.hello(directory, "reader-" + clients++, WAIT);
                SharedFile local = SharedFile.sealedMemfd(length))
            {
                assertThat(register(reader, local, 0, length)).isEqualTo("OK");
                for (int attempt = 0; attempt < 8 && overlapped == 0; attempt++)
                {
                    try (SharedFile source = SharedFile.sealedMemfd(length))
                    {
                        SystemTests.fill(source.memory, 0xFEED + attempt);
                        source.memory.set(ValueLayout.JAVA_BYTE, 0, (byte)1);
                        local.memory.fill((byte)0);
                        assertThat(register(owner, source, 0, length)).isEqualTo("OK");
                        final ControlFrame opened = reader.request(frame -> frame.begin(ControlMessages.OPEN_SEGMENT)
                            .putLong(ControlMessages.CORRELATION_ID, 3)
                            .putString(ControlMessages.OPEN_SEGMENT_NAME, ownerAddress + "/owner"), WAIT);
                        assertThat(opened.type()).as("remote segment opened").isEqualTo(ControlMessages.OK);
                        final long segment = opened.getLong(ControlMessages.OK_VALUE);

                        final long requestId =
                            submit(reader, Opcode.READ, segment, local.address(), source.address(), length);
                        final long deadline = System.nanoTime() + REACTS_WITHIN.toNanos();
                        while (local.memory.get(ValueLayout.JAVA_BYTE, 0) == 0 && System.nanoTime() < deadline)
                        {
                            Thread.onSpinWait(); // the first bytes arrived: the owner's daemon is sending
                        }
                        boolean held = false;
                        Signals.send(daemon.pid(), Signals.SIGSTOP);
                        try
                        {
                            sleep(50); // stopped by now: the reader's memory no longer changes
                            final long received = MemorySegment.mismatch(source.memory, 0, length, local.memory, 0,
                                length);
                            held = received >= 0 && length - received >= 40 * MIB;
                            owner.send(frame -> frame.begin(ControlMessages.UNREGISTER_MEMORY)
                                .putLong(ControlMessages.CORRELATION_ID, 2)
                                .putLong(ControlMessages.UNREGISTER_ADDRESS, source.address()), WAIT);
                            if (held)
                            {
                                assertThat(answersWithin(owner, Duration.ofSeconds(2)))
                                    .as("no answer while the owner's daemon still sends the range (%d of %d bytes " +
                                        "landed)", received, length).isFalse();
                            }
                        }
                        finally
                        {
                            Signals.send(daemon.pid(), Signals.SIGCONT);
                        }
                        assertThat(owner.answer(WAIT).type()).as("UNREGISTER answered OK")
                            .isEqualTo(ControlMessages.OK);
                        final long[] completion = reader.awaitCompletion(requestId, WAIT);
                        assertThat(TransferStatus.name((int)completion[0])).as("the READ that held the range")
                            .isEqualTo("OK");
                        assertThat(completion[1]).isEqualTo(length);
                        assertThat(MemorySegment.mismatch(source.memory, 0, length, local.memory, 0, length))
                            .as("every byte arrived as it was").isEqualTo(-1);
                        overlapped += held ? 1 : 0;
                    }
                }
                assertThat(owner.isOpenedByDaemon()).isTrue();
            }
            assertThat(ownerDaemon.isAlive()).isTrue();
        }
        finally
        {
            SystemTests.deleteRecursively(ownerDirectory);
        }
        assertThat(overlapped).as("at least one UNREGISTER arrived while its READ was held").isPositive();
        honest.assertRound();
        assertThat(daemon.isAlive()).isTrue();
    }

    /**
     * @return true when an answer frame arrived within {@code timeout} (it is then consumed).
     */
    private static boolean answersWithin(final RawControlSession client, final Duration timeout)
    {
        try
        {
            client.answer(timeout);
            return true;
        }
        catch (final AssertionError timedOut)
        {
            return false;
        }
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * kill(2), to stop and continue a daemon process.
     */
    private static final class Signals
    {
        static final int SIGCONT = 18;
        static final int SIGSTOP = 19;
        private static final MethodHandle KILL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("kill"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

        static void send(final long pid, final int signal)
        {
            try
            {
                assertThat((int)KILL.invokeExact((int)pid, signal)).as("kill " + pid + " " + signal).isZero();
            }
            catch (final Throwable t)
            {
                throw new IllegalStateException(t);
            }
        }
    }


    /**
     * @return "OK", or the name of the ERROR's code.
     */
    private static String register(
        final RawControlSession client, final SharedFile file, final long offset, final long length)
    {
        final ControlFrame answer = client.request(frame -> frame.begin(ControlMessages.REGISTER_MEMORY)
            .putLong(ControlMessages.CORRELATION_ID, 1)
            .putLong(ControlMessages.REGISTER_ADDRESS, file.address() + offset)
            .putLong(ControlMessages.REGISTER_LENGTH, length)
            .putLong(ControlMessages.REGISTER_FD_OFFSET, offset)
            .putString(ControlMessages.REGISTER_LOCATION, "cpu:0"), file.fd, WAIT);
        return answer.type() == ControlMessages.OK ? "OK" : ControlError.name(answer.getInt(ControlMessages.ERROR_CODE));
    }

    /**
     * One SUBMIT into the client's own ring, not waited for.
     */
    private static long submit(final RawControlSession client, final int opcode, final long segment,
        final long localAddress, final long targetAddress, final long length)
    {
        final long requestId = System.nanoTime();
        final OneToOneRingBuffer ring = client.submitRing();
        final int index = ring.tryClaim(RecordTypes.SUBMIT, SubmitRequestFlyweight.recordLength(0));
        assertThat(index).as("room in the submit ring").isPositive();
        new SubmitRequestFlyweight().wrap(ring.buffer(), index).clearReserved().opcode(opcode).requestId(requestId)
            .segmentHandle(segment).localAddress(localAddress).targetAddress(targetAddress).length(length).traceId(0)
            .submitNanos(System.nanoTime()).noNotify();
        ring.commit(index);
        client.ringDoorbell();
        return requestId;
    }

    /**
     * Shared memory this test hands the daemon: a memfd (sealed or not) or a tmpfs file, mapped here too.
     */
    private static final class SharedFile implements AutoCloseable
    {
        private static final MethodHandle OPEN = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("open"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2));
        private static final int O_RDWR_CLOEXEC = 02 | 02000000;

        final int fd;
        final MemorySegment memory;
        private final Path path;

        private SharedFile(final int fd, final long length, final Path path)
        {
            this.fd = fd;
            this.memory = MappedMemory.mapShared(fd, 0, length);
            this.path = path;
        }

        static SharedFile sealedMemfd(final long length)
        {
            final int fd = Memfd.createSealable("memory-safety");
            Memfd.truncate(fd, length);
            Memfd.addSeals(fd, Memfd.SEAL_SHRINK);
            return new SharedFile(fd, length, null);
        }

        static SharedFile unsealedMemfd(final long length)
        {
            final int fd = Memfd.create("memory-safety-unsealed");
            Memfd.truncate(fd, length);
            return new SharedFile(fd, length, null);
        }

        static SharedFile tmpfsFile(final long length) throws Exception
        {
            final Path path = Files.createTempFile(Path.of("/dev/shm"), "xferd-memory-safety-", ".mem");
            try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw"))
            {
                file.setLength(length);
            }
            final int fd;
            try (Arena arena = Arena.ofConfined())
            {
                fd = (int)OPEN.invokeExact(arena.allocateFrom(path.toString()), O_RDWR_CLOEXEC);
            }
            catch (final Throwable t)
            {
                Files.delete(path);
                throw new IllegalStateException("open " + path, t);
            }
            assertThat(fd).as("open " + path).isNotNegative();
            return new SharedFile(fd, length, path);
        }

        long address()
        {
            return memory.address();
        }

        void shrinkTo(final long length)
        {
            Memfd.truncate(fd, length); // ftruncate: works on any file
        }

        @Override
        public void close()
        {
            MappedMemory.unmap(memory);
            Memfd.close(fd);
            if (path != null)
            {
                try
                {
                    Files.deleteIfExists(path);
                }
                catch (final java.io.IOException ignore)
                {
                    // /dev/shm is cleared at reboot
                }
            }
        }
    }
}
