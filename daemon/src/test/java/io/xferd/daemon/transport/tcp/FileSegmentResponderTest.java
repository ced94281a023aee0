package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.control.SessionRegions;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.storage.StorageFile;
import io.xferd.daemon.storage.StorageStage;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.IoUring;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A peer's READs and WRITEs of a file region, served by a real {@link PeerServer} on 127.0.0.1:0 through a
 * {@link StorageStage} that this test drives by hand ({@code doWork()} on the test's thread, no agent thread), so
 * that "the stage has not run yet" is a state, not a race: a WRITE into the file is acknowledged only once the stage
 * has written it, while the connection's thread goes on serving the requests behind it; READs of the file are
 * answered in order with the file's bytes; a file truncated under its region fails a READ and a WRITE with
 * STORAGE_TRUNCATED and the requests between them complete; the buffers come from the daemon's budget, go back to it
 * when the connection ends, and with the budget spent files are served on the connection's thread. The initiator is
 * a {@link RawPeer}.
 */
@Timeout(30)
class FileSegmentResponderTest
{
    private static final String TOKEN = "file-segment-responder-test-token-0123456789";
    private static final int SIZE = 64 * 1024;
    private static final long BASE = 0x7f00_0000_0000L;
    private static final long FILE_BASE = 1L << 62;
    private static final long DIRECT_BASE = FILE_BASE + (1L << 40);
    private static final int FILE_SIZE = 256 * 1024;
    private static final long WAIT_NS = 20_000_000_000L;
    /** Tries of a burst that must reach the handler whole (see the three-slice test). */
    private static final int BURST_ATTEMPTS = 5;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final DaemonContext context = new DaemonContext().rpcAddress("127.0.0.1:0").maxClients(1)
        .transferTimeoutMs(20_000).clusterToken(TOKEN);
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)),
        new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final SessionTable registry = new SessionTable(1);
    private final Arena arena = Arena.ofShared();
    private final MemorySegment memory = arena.allocate(SIZE, 4096);
    private final ClientSession owner = new ClientSession(0, 1, "decode", "127.0.0.1:0/decode",
        (int)ProcessHandle.current().pid(), 0, 0, null, null, null, new ManyToOneRingBuffer(new UnsafeBuffer(
        ByteBuffer.allocateDirect(64 * 1024 + RingBufferDescriptor.TRAILER_LENGTH))), null);
    private final byte[] seeded = new byte[FILE_SIZE];
    @TempDir
    Path directory;
    private Path path;
    private StorageFile file;
    private StorageFile direct;
    private Region memoryRegion;
    private Region fileRegion;
    private StorageStage stage;
    private PeerServer server;

    @BeforeEach
    void start() throws IOException
    {
        assumeTrue(IoUring.isAvailable(), "io_uring not available here");
        new SplittableRandom(17).nextBytes(seeded);
        path = Files.write(directory.resolve("region.bin"), seeded);
        final int fd = FileIo.open(path.toString(), FileIo.O_RDWR, 0);
        assertThat(fd).isNotNegative();
        file = new StorageFile(fd, 0, FILE_SIZE, false, false, StorageFile.FILE);
        memoryRegion = new Region(BASE, SIZE, "cpu:0", memory, memory);
        fileRegion = Region.inFile(FILE_BASE, FILE_SIZE, file);
        SessionRegions.set(owner, RegionTable.EMPTY.with(memoryRegion).with(fileRegion));
        registry.add(owner);
        stage = new StorageStage(8, 64, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
            counters.get(SystemCounter.STORAGE_SYNCS));
        clock.update(1_000_000_000_000L);
        server = new PeerServer(context, registry, counters, new ManyToOneConcurrentArrayQueue<>(4), 77,
            LocalNics.resolve(List.of()), clock);
        server.storageStage(stage);
        server.start();
    }

    @AfterEach
    void close()
    {
        if (server != null)
        {
            server.close();
            stage.close();
            file.close();
            if (direct != null)
            {
                direct.close();
            }
        }
        arena.close();
    }

    @Test
    void shouldAcknowledgeAFileWriteOnlyOnceTheStageWroteItWhileServingTheRequestsBehindIt() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");

            peer.send(peer.writeFrame(1, handle, FILE_BASE + 8192, 4096, 4096, (byte)7, true),
                peer.writeFrame(2, handle, BASE, 100, 100, (byte)9, true));

            // the connection's thread took the file WRITE's payload, handed it to the stage and went on: the WRITE
            // into memory behind it lands while the file's bytes are still waiting for the stage
            awaitTrue(() -> memory.get(ValueLayout.JAVA_BYTE, 99) == 9);
            assertThat(fileBytes(8192, 4096)).as("the stage has not run").isEqualTo(Arrays.copyOfRange(seeded,
                8192, 8192 + 4096));
            assertThat(peer.available()).as("no answer before the file WRITE's, which waits for the stage").isZero();

            runStageUntil(() -> answered(peer)); // the write lands, then its completion is reaped and answered
            assertThat(peer.ack()).containsExactly(1, TransferStatus.OK, 0);
            assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
            final byte[] sevens = new byte[4096];
            Arrays.fill(sevens, (byte)7);
            assertThat(fileBytes(8192, 4096)).isEqualTo(sevens);
            assertThat(counters.get(SystemCounter.STORAGE_BYTES_WRITTEN).get()).isEqualTo(4096);
        }
    }

    @Test
    void shouldSendAnAnswerReadyBeforeAnOlderFileAnswerOnlyToAPeerThatMatchesAnswersById() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN, PeerProtocol.FLAG_ANSWERS_BY_ID))
        {
            final long handle = peer.handle("decode");
            memory.fill((byte)3);

            // the file READ waits in the stage, which has not run: the memory READ behind it is answered first
            peer.read(1, handle, FILE_BASE + 8192, 4096);
            peer.read(2, handle, BASE, 1000);
            assertAnswer(peer.ack(), 2, 1000);
            assertThat(peer.payload(1000)).containsOnly(3);
            assertThat(peer.available()).as("the file READ's answer waits for the stage").isZero();

            runStageUntil(() -> answered(peer));
            assertAnswer(peer.ack(), 1, 4096);
            assertThat(peer.payload(4096)).isEqualTo(Arrays.copyOfRange(seeded, 8192, 8192 + 4096));
        }
    }

    @Test
    void shouldKeepAnswersInOrderForAPeerThatDidNotOfferToMatchThemById() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            memory.fill((byte)3);

            peer.read(1, handle, FILE_BASE + 8192, 4096);
            peer.read(2, handle, BASE, 1000);
            final long deadline = System.nanoTime() + 200_000_000L;
            while (System.nanoTime() < deadline)
            {
                assertThat(peer.available()).as("nothing before the file READ's answer, which waits for the stage")
                    .isZero();
                Thread.sleep(5);
            }

            runStageUntil(() -> answered(peer));
            assertAnswer(peer.ack(), 1, 4096);
            assertThat(peer.payload(4096)).isEqualTo(Arrays.copyOfRange(seeded, 8192, 8192 + 4096));
            assertAnswer(peer.ack(), 2, 1000);
            assertThat(peer.payload(1000)).containsOnly(3);
        }
    }

    @Test
    void shouldGiveItsFileBuffersBackToTheDaemonsBudgetWhenTheConnectionEnds() throws Exception
    {
        final FileBufferBudget budget = server.fileBuffers();
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            peer.send(peer.writeFrame(1, handle, FILE_BASE, 4096, 4096, (byte)7, true));
            awaitTrue(() -> budget.left() < FileSegmentResponder.DAEMON_BUDGET_BYTES);
            runStageUntil(() -> answered(peer));
            assertThat(peer.ack()).containsExactly(1, TransferStatus.OK, 0);
        }
        awaitTrue(() -> budget.left() == FileSegmentResponder.DAEMON_BUDGET_BYTES);
    }

    @Test
    void shouldServeFilesOnTheConnectionsThreadOnceTheDaemonsFileBufferBudgetIsSpent() throws Exception
    {
        final FileBufferBudget budget = server.fileBuffers();
        final long all = budget.left();
        assertThat(budget.tryTake(all)).isTrue();
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");

            // the stage never runs here: both are served synchronously, on the connection's own io_uring
            peer.send(peer.writeFrame(1, handle, FILE_BASE + 4096, 4096, 4096, (byte)4, true));
            assertThat(peer.ack()).containsExactly(1, TransferStatus.OK, 0);
            peer.read(2, handle, FILE_BASE + 4000, 200);
            assertAnswer(peer.ack(), 2, 200);
            final byte[] expected = Arrays.copyOfRange(seeded, 4000, 4200);
            Arrays.fill(expected, 96, 200, (byte)4);
            assertThat(peer.payload(200)).isEqualTo(expected);
        }
        finally
        {
            budget.giveBack(all);
        }
    }

    @Test
    void shouldServeSlicesOffTheBlocksOfAnODirectFileOnTheConnectionsThread() throws Exception
    {
        final int fd = FileIo.open(path.toString(), FileIo.O_RDWR, 0);
        assertThat(fd).isNotNegative();
        direct = new StorageFile(fd, 0, FILE_SIZE, true, false, StorageFile.FILE);
        assumeTrue(FileIo.trySetDirect(fd), "this file system refuses O_DIRECT");
        SessionRegions.set(owner, RegionTable.EMPTY.with(memoryRegion).with(fileRegion)
            .with(Region.inFile(DIRECT_BASE, FILE_SIZE, direct)));
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");

            // the kernel refuses O_DIRECT off the device's blocks: these never reach the stage (which never runs
            // here), the connection's own io_uring serves them through an aligned bounce buffer
            peer.read(1, handle, DIRECT_BASE + 100, 1000);
            assertAnswer(peer.ack(), 1, 1000);
            assertThat(peer.payload(1000)).isEqualTo(Arrays.copyOfRange(seeded, 100, 1100));
            peer.send(peer.writeFrame(2, handle, DIRECT_BASE + 5000, 3000, 3000, (byte)6, true));
            assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
            final byte[] expected = Arrays.copyOfRange(seeded, 4096, 8192 + 4096);
            Arrays.fill(expected, 5000 - 4096, 8000 - 4096, (byte)6);
            assertThat(fileBytes(4096, 8192)).as("the bytes around it untouched").isEqualTo(expected);
        }
    }

    @Test
    void shouldAnswerReadsOfTheFileInOrderWithItsBytes() throws Exception
    {
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            memory.fill((byte)3);

            peer.read(1, handle, FILE_BASE + 100_000, 70_000);
            peer.read(2, handle, BASE, 1000);
            peer.read(3, handle, FILE_BASE, 4096);
            peer.read(4, handle, FILE_BASE + FILE_SIZE - 5, 5);

            final Thread driver = driveStage();
            try
            {
                assertAnswer(peer.ack(), 1, 70_000);
                assertThat(peer.payload(70_000)).isEqualTo(Arrays.copyOfRange(seeded, 100_000, 170_000));
                assertAnswer(peer.ack(), 2, 1000);
                final byte[] threes = new byte[1000];
                Arrays.fill(threes, (byte)3);
                assertThat(peer.payload(1000)).isEqualTo(threes);
                assertAnswer(peer.ack(), 3, 4096);
                assertThat(peer.payload(4096)).isEqualTo(Arrays.copyOfRange(seeded, 0, 4096));
                assertAnswer(peer.ack(), 4, 5);
                assertThat(peer.payload(5)).isEqualTo(Arrays.copyOfRange(seeded, FILE_SIZE - 5, FILE_SIZE));
            }
            finally
            {
                driver.interrupt();
                driver.join();
            }
        }
    }

    @Test
    void shouldFailAReadAndAWriteOfATruncatedFileTypedAndServeTheRequestsBetweenThem() throws Exception
    {
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw"))
        {
            raf.setLength(FILE_SIZE / 2);
        }
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");

            peer.send(peer.writeFrame(1, handle, FILE_BASE, 8192, 8192, (byte)5, true),
                peer.writeFrame(2, handle, BASE, 64, 64, (byte)6, true));
            peer.read(3, handle, FILE_BASE + 4096, 4096);
            peer.send(peer.writeFrame(4, handle, BASE + 64, 64, 64, (byte)8, true));

            final Thread driver = driveStage();
            try
            {
                assertThat(peer.ack()).containsExactly(1, TransferStatus.STORAGE_TRUNCATED, 0);
                assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
                assertThat(peer.ack()).as("no bytes with a failed READ")
                    .containsExactly(3, TransferStatus.STORAGE_TRUNCATED, 0);
                assertThat(peer.ack()).containsExactly(4, TransferStatus.OK, 0);
            }
            finally
            {
                driver.interrupt();
                driver.join();
            }
            assertThat(memory.get(ValueLayout.JAVA_BYTE, 127)).isEqualTo((byte)8);
            assertThat(Files.size(path)).as("not regrown").isEqualTo(FILE_SIZE / 2);
            assertThat(counters.get(SystemCounter.STORAGE_ERRORS).get()).isEqualTo(2);
        }
    }

    @Test
    void shouldSendReadsOfAFileOnTmpfsFromItsPagesWithoutTheStageAndFailThemTypedOnceTheFileIsTruncated()
        throws Exception
    {
        final Path onTmpfs = tmpfsFile(seeded);
        serveFile(onTmpfs, FileIo.O_RDWR, 4096, true);
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            memory.fill((byte)3);

            // the stage never runs in this test: every answer comes from the connection's thread, unaligned or not
            peer.read(1, handle, DIRECT_BASE + 1, 100_000);
            peer.read(2, handle, BASE, 1000);
            peer.read(3, handle, DIRECT_BASE + FILE_SIZE - 4096 - 7, 7);
            assertAnswer(peer.ack(), 1, 100_000);
            assertThat(peer.payload(100_000)).isEqualTo(Arrays.copyOfRange(seeded, 4097, 4097 + 100_000));
            assertAnswer(peer.ack(), 2, 1000);
            assertThat(peer.payload(1000)).containsOnly(3);
            assertAnswer(peer.ack(), 3, 7);
            assertThat(peer.payload(7)).isEqualTo(Arrays.copyOfRange(seeded, FILE_SIZE - 7, FILE_SIZE));
            assertThat(counters.get(SystemCounter.STORAGE_BYTES_READ).get()).isEqualTo(100_007);

            try (RandomAccessFile raf = new RandomAccessFile(onTmpfs.toFile(), "rw"))
            {
                raf.setLength(FILE_SIZE - 1);
            }
            peer.read(4, handle, DIRECT_BASE, 4096);
            peer.read(5, handle, BASE, 10);
            assertThat(peer.ack()).as("no bytes with a READ of a file shorter than its region")
                .containsExactly(4, TransferStatus.STORAGE_TRUNCATED, 0);
            assertAnswer(peer.ack(), 5, 10);
            assertThat(peer.payload(10)).containsOnly(3);
            assertThat(counters.get(SystemCounter.STORAGE_ERRORS).get()).isEqualTo(1);
        }
        finally
        {
            Files.deleteIfExists(onTmpfs);
        }
        assertThat(server.fileBuffers().left()).as("no buffer of the stage's path was taken")
            .isEqualTo(FileSegmentResponder.DAEMON_BUDGET_BYTES);
    }

    @Test
    void shouldReceiveWritesIntoAFileOnTmpfsStraightIntoItsPagesAndFailThemTypedOnceTheFileIsTruncated()
        throws Exception
    {
        final Path onTmpfs = tmpfsFile(seeded);
        serveFile(onTmpfs, FileIo.O_RDWR, 4096, true);
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            memory.fill((byte)3);

            // the stage never runs in this test: the bytes are in the file once answered, unaligned or not
            peer.send(peer.writeFrame(1, handle, DIRECT_BASE + 1, 100_000, 100_000, (byte)5, true),
                peer.writeFrame(2, handle, DIRECT_BASE + FILE_SIZE - 4096 - 7, 7, 7, (byte)6, true));
            assertThat(peer.ack()).containsExactly(1, TransferStatus.OK, 0);
            assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
            final byte[] expected = seeded.clone();
            Arrays.fill(expected, 4097, 4097 + 100_000, (byte)5);
            Arrays.fill(expected, FILE_SIZE - 7, FILE_SIZE, (byte)6);
            assertThat(Files.readAllBytes(onTmpfs)).isEqualTo(expected);
            assertThat(counters.get(SystemCounter.STORAGE_BYTES_WRITTEN).get()).isEqualTo(100_007);

            try (RandomAccessFile raf = new RandomAccessFile(onTmpfs.toFile(), "rw"))
            {
                raf.setLength(FILE_SIZE - 1);
            }
            peer.send(peer.writeFrame(3, handle, DIRECT_BASE, 4096, 4096, (byte)7, true));
            peer.read(4, handle, BASE, 10);
            assertThat(peer.ack()).as("nothing written into a file shorter than its region")
                .containsExactly(3, TransferStatus.STORAGE_TRUNCATED, 0);
            assertAnswer(peer.ack(), 4, 10);
            assertThat(peer.payload(10)).containsOnly(3);
            assertThat(Files.readAllBytes(onTmpfs)).isEqualTo(Arrays.copyOf(expected, FILE_SIZE - 1));
            assertThat(counters.get(SystemCounter.STORAGE_ERRORS).get()).isEqualTo(1);
        }
        finally
        {
            Files.deleteIfExists(onTmpfs);
        }
        assertThat(server.fileBuffers().left()).as("no buffer of the stage's path was taken")
            .isEqualTo(FileSegmentResponder.DAEMON_BUDGET_BYTES);
    }

    @Test
    void shouldSendTheAnswersUpToASliceEndingItsRequestIntoAFileOnTmpfsBeforeReadingTheNextRequestsSlice()
        throws Exception
    {
        // as into memory (PeerSessionHandlerTest): the first half of request A, its second half, the first half of
        // B, in one write (12 KiB on loopback: one segment); the answers to A leave before the third slice is read,
        // the third's once nothing more is readable. Without the decision on this path all three leave in one write.
        // A write that reaches the handler in parts (a loaded machine) sends A's first answer alone: that attempt is
        // tried again on a new connection, a bounded number of times
        final int slice = BufferedChannel.READ_AHEAD / 2;
        final Path onTmpfs = tmpfsFile(seeded);
        serveFile(onTmpfs, FileIo.O_RDWR, 0, false);
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
                    peer.writeSliceFrame(1, handle, DIRECT_BASE, slice, DIRECT_BASE, 2 * slice, (byte)1),
                    peer.writeSliceFrame(2, handle, DIRECT_BASE + slice, slice, DIRECT_BASE, 2 * slice, (byte)2),
                    peer.writeSliceFrame(3, handle, DIRECT_BASE + 2 * slice, slice, DIRECT_BASE + 2 * slice, 2 * slice,
                        (byte)3));

                assertThat(peer.ack()).containsExactly(1, TransferStatus.OK, 0);
                assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
                assertThat(peer.ack()).containsExactly(3, TransferStatus.OK, 0);
                writes = server.answerWrites() - before;
                assertThat(writes).as("A's ending answer waited for the third slice's read").isGreaterThan(1);
            }
            assertThat(writes).as("writes of answers: A's two, then B's first (in %d attempts)", BURST_ATTEMPTS)
                .isEqualTo(2);
            assertThat(Files.readAllBytes(onTmpfs)[3 * slice - 1]).isEqualTo((byte)3);
        }
        finally
        {
            for (final RawPeer peer : peers)
            {
                peer.close();
            }
            Files.deleteIfExists(onTmpfs);
        }
    }

    @Test
    void shouldLeaveReadsOverAHoleOfASparseFileOnTmpfsToTheStageAndFillHolesThatAWriteLandsIn() throws Exception
    {
        final Path onTmpfs = tmpfsFile(Arrays.copyOf(seeded, 65_536));
        try (RandomAccessFile raf = new RandomAccessFile(onTmpfs.toFile(), "rw"))
        {
            raf.setLength(FILE_SIZE); // a hole from 64 KiB to the end
        }
        final long blocks = allocatedBlocks(onTmpfs);
        serveFile(onTmpfs, FileIo.O_RDWR, 0, false);
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            peer.read(1, handle, DIRECT_BASE + 60_000, 40_000);
            final Thread driver = driveStage();
            try
            {
                assertAnswer(peer.ack(), 1, 40_000);
                assertThat(peer.payload(40_000)).isEqualTo(Arrays.copyOf(Arrays.copyOfRange(seeded, 60_000, 65_536),
                    40_000));
            }
            finally
            {
                driver.interrupt();
                driver.join();
            }
            assertThat(allocatedBlocks(onTmpfs)).as("the hole read stays a hole").isEqualTo(blocks);

            peer.send(peer.writeFrame(2, handle, DIRECT_BASE + 200_000, 10_000, 10_000, (byte)9, true));
            assertThat(peer.ack()).containsExactly(2, TransferStatus.OK, 0);
            final byte[] expected = Arrays.copyOf(Arrays.copyOf(seeded, 65_536), FILE_SIZE);
            Arrays.fill(expected, 200_000, 210_000, (byte)9);
            assertThat(Files.readAllBytes(onTmpfs)).isEqualTo(expected);
        }
        finally
        {
            Files.deleteIfExists(onTmpfs);
        }
    }

    private static long allocatedBlocks(final Path file) throws IOException, InterruptedException
    {
        final Process stat = new ProcessBuilder("stat", "-c", "%b", file.toString()).start();
        final String out = new String(stat.getInputStream().readAllBytes()).trim();
        assertThat(stat.waitFor()).isZero();
        return Long.parseLong(out);
    }

    @Test
    void shouldSendReadsOfAFileOnTmpfsOpenedReadOnlyFromItsPages() throws Exception
    {
        final Path onTmpfs = tmpfsFile(seeded);
        serveFile(onTmpfs, FileIo.O_RDONLY, 100, false);
        try (RawPeer peer = RawPeer.connect(server.advertisedAddress(), TOKEN))
        {
            final long handle = peer.handle("decode");
            peer.read(1, handle, DIRECT_BASE + 3, 5000);
            assertAnswer(peer.ack(), 1, 5000);
            assertThat(peer.payload(5000)).isEqualTo(Arrays.copyOfRange(seeded, 103, 5103));
            assertThat(direct.pageCacheBytes()).isNotNull();
            assertThat(direct.pageCacheWritable()).as("a read-only descriptor maps read-only").isFalse();
        }
        finally
        {
            Files.deleteIfExists(onTmpfs);
        }
    }

    private static void assertAnswer(final long[] answer, final long sliceId, final long length)
    {
        assertThat(answer).containsExactly(sliceId, TransferStatus.OK, length);
    }

    private byte[] fileBytes(final long offset, final int length)
    {
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "r"))
        {
            final byte[] bytes = new byte[length];
            raf.seek(offset);
            raf.readFully(bytes);
            return bytes;
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * The stage's work on the test's thread until {@code done} (bounded).
     */
    /**
     * Whether the peer's answer has started to arrive. The file's bytes alone are not enough to stop driving the
     * stage: the kernel may write them in one {@code doWork()} and the completion be reaped in the next.
     */
    private static boolean answered(final RawPeer peer)
    {
        try
        {
            return peer.available() > 0;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private void runStageUntil(final BooleanSupplier done)
    {
        final long deadline = System.nanoTime() + WAIT_NS;
        while (!done.getAsBoolean())
        {
            assertThat(System.nanoTime() - deadline).as("still waiting").isNegative();
            if (stage.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * The stage's work on a thread of its own, as the daemon's agent runs it, until interrupted.
     */
    private Thread driveStage()
    {
        final Thread driver = new Thread(() ->
        {
            while (!Thread.currentThread().isInterrupted())
            {
                if (stage.doWork() == 0)
                {
                    java.util.concurrent.locks.LockSupport.parkNanos(10_000);
                }
            }
        }, "test-storage-stage");
        driver.start();
        return driver;
    }

    private static void awaitTrue(final BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = System.nanoTime() + WAIT_NS;
        while (!condition.getAsBoolean())
        {
            assertThat(System.nanoTime() - deadline).as("still waiting").isNegative();
            Thread.sleep(1);
        }
    }

    /** A file on /dev/shm holding {@code bytes}; the test is skipped where /dev/shm is not tmpfs. */
    private static Path tmpfsFile(final byte[] bytes) throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && "tmpfs".equals(Files.getFileStore(shm).type()), "no tmpfs");
        return Files.write(Files.createTempFile(shm, "xferd-responder", ".bin"), bytes);
    }

    /**
     * The owner's region at DIRECT_BASE becomes {@code file} from {@code offset} to FILE_SIZE, opened with
     * {@code openFlags} (O_DIRECT tried when {@code tryDirect}).
     */
    private void serveFile(final Path file, final int openFlags, final long offset, final boolean tryDirect)
    {
        final int fd = FileIo.open(file.toString(), openFlags, 0);
        assertThat(fd).isNotNegative();
        direct = new StorageFile(fd, offset, FILE_SIZE - offset, tryDirect && FileIo.trySetDirect(fd), false,
            StorageFile.FILE);
        SessionRegions.set(owner, RegionTable.EMPTY.with(memoryRegion).with(fileRegion)
            .with(Region.inFile(DIRECT_BASE, FILE_SIZE - offset, direct)));
    }
}
