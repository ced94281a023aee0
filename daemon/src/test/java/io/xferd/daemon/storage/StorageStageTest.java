package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.FileRegionMapper;
import io.xferd.daemon.memory.Region;
import io.xferd.ipc.FileRegistration;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.IoUring;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static io.xferd.ipc.ControlMessages.REGISTER_FILE_BUFFERED;
import static io.xferd.ipc.ControlMessages.REGISTER_FILE_SYNC;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The asynchronous storage stage: requests from any thread overlap on one io_uring per device up to the queue
 * depth, each completes once, after all its bytes landed (and its fdatasync returned, for a sync file), or with its
 * typed status; a failed request leaves the others alone. Real files on disk, on tmpfs and on a device that fails its
 * writeback; every byte checked against the file.
 */
@Timeout(120)
class StorageStageTest
{
    private static final long ADDRESS = FileRegistration.FILE_ADDRESS_BASE;
    private static final int DEPTH = 16;
    private static final int UNSET = -1;

    @TempDir
    Path dir;

    private final StorageTestData data = new StorageTestData(17);
    private final Arena arena = data.arena;
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final StorageStage stage = new StorageStage(DEPTH, 1024, counters.get(SystemCounter.STORAGE_BYTES_READ),
        counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
        counters.get(SystemCounter.STORAGE_SYNCS));
    private final FileRegionMapper mapper = new FileRegionMapper();
    private final List<Region> regions = new ArrayList<>();
    private AgentRunner runner;

    @BeforeEach
    void requireIoUring()
    {
        assumeTrue(IoUring.isAvailable(), "io_uring not available here");
    }

    @AfterEach
    void close() throws IOException
    {
        if (runner != null)
        {
            runner.close();
        }
        else
        {
            stage.close();
        }
        regions.forEach(FileRegionMapper::unmap);
        data.close();
    }

    @Test
    void shouldOverlapRequestsOfManyCallersOnTheDeviceAndLandEveryByte() throws Exception
    {
        final int block = 64 * 1024;
        final int count = 128;
        final Path file = StorageTestData.sized(dir.resolve("disk.bin"), (long)block * count);
        final Region region = register(file, 0, (long)block * count, 0);
        final byte[] expected = data.randomBytes(block * count);
        final MemorySegment memory = data.memory(expected);
        final int[] order = data.shuffled(count);

        // all queued before the stage runs: its first duty cycle sees them together, as a loaded daemon would
        final Completions writes = new Completions(count);
        for (final int i : order)
        {
            assertThat(stage.submit(writes.request(i).set(region.file(), true, (long)i * block,
                memory.address() + (long)i * block, block))).isTrue();
        }
        start();
        writes.awaitAll();
        writes.assertAll(TransferStatus.OK);
        assertThat(stage.peakInFlight()).as("operations of different requests in flight together").isEqualTo(DEPTH);
        assertThat(Files.readAllBytes(file)).isEqualTo(expected);

        final MemorySegment back = arena.allocate((long)block * count, 4096);
        final Completions reads = new Completions(count);
        for (final int i : order)
        {
            assertThat(stage.submit(reads.request(i).set(region.file(), false, (long)i * block,
                back.address() + (long)i * block, block))).isTrue();
        }
        reads.awaitAll();
        reads.assertAll(TransferStatus.OK);
        assertThat(back.toArray(JAVA_BYTE)).isEqualTo(expected);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_WRITTEN).get()).isEqualTo((long)block * count);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_READ).get()).isEqualTo((long)block * count);
    }

    @Test
    void shouldCutLargeRequestsIntoOperationsAndMoveAnyAlignmentBufferedOnTmpfs() throws Exception
    {
        final int length = 5 * DeviceQueue.MAX_OPERATION + 12_345;
        final Path file = data.shm(length + 100);
        final Region region = register(file, 0, length + 100, REGISTER_FILE_BUFFERED);
        final byte[] expected = data.randomBytes(length);
        final MemorySegment memory = arena.allocate(length + 3L, 8).asSlice(3);
        MemorySegment.copy(expected, 0, memory, JAVA_BYTE, 0, length);
        start();

        final Completions write = new Completions(1);
        stage.submit(write.request(0).set(region.file(), true, 77, memory.address(), length));
        write.awaitAll();
        write.assertAll(TransferStatus.OK);
        assertThat(Arrays.copyOfRange(Files.readAllBytes(file), 77, 77 + length)).isEqualTo(expected);

        final MemorySegment back = arena.allocate(length, 1);
        final Completions read = new Completions(1);
        stage.submit(read.request(0).set(region.file(), false, 77, back.address(), length));
        read.awaitAll();
        read.assertAll(TransferStatus.OK);
        assertThat(back.toArray(JAVA_BYTE)).isEqualTo(expected);
    }

    @Test
    void shouldFailOnlyTheRequestsOfAFileTruncatedUnderItsRegion() throws Exception
    {
        final int block = 64 * 1024;
        final Path shrinking = StorageTestData.sized(dir.resolve("shrinks.bin"), 16L * block);
        final Path whole = StorageTestData.sized(dir.resolve("whole.bin"), 16L * block);
        final Region shrunk = register(shrinking, 0, 16L * block, 0);
        final Region intact = register(whole, 0, 16L * block, 0);
        try (RandomAccessFile raf = new RandomAccessFile(shrinking.toFile(), "rw"))
        {
            raf.setLength(8L * block);
        }
        final byte[] expected = data.randomBytes(16 * block);
        final MemorySegment memory = data.memory(expected);
        start();

        final Completions completions = new Completions(32);
        for (int i = 0; i < 16; i++)
        {
            stage.submit(completions.request(2 * i).set(shrunk.file(), true, (long)i * block,
                memory.address() + (long)i * block, block));
            stage.submit(completions.request(2 * i + 1).set(intact.file(), true, (long)i * block,
                memory.address() + (long)i * block, block));
        }
        completions.awaitAll();
        for (int i = 0; i < 16; i++)
        {
            assertThat(completions.status(2 * i)).isEqualTo(TransferStatus.STORAGE_TRUNCATED);
            assertThat(completions.status(2 * i + 1)).isEqualTo(TransferStatus.OK);
        }
        assertThat(Files.size(shrinking)).as("never regrown").isEqualTo(8L * block);
        assertThat(Files.readAllBytes(whole)).isEqualTo(expected);
        assertThat(counters.get(SystemCounter.STORAGE_ERRORS).get()).isEqualTo(16);
    }

    @Test
    void shouldCompleteSyncWritesOnlyAfterAnFdatasyncSharedByTheWritesThatLandedTogether() throws Exception
    {
        final int block = 64 * 1024;
        final int count = 64;
        final Path file = data.shm((long)block * count);
        final Region region = register(file, 0, (long)block * count, REGISTER_FILE_SYNC);
        final byte[] expected = data.randomBytes(block * count);
        final MemorySegment memory = data.memory(expected);

        final Completions completions = new Completions(count);
        for (int i = 0; i < count; i++)
        {
            stage.submit(completions.request(i).set(region.file(), true, (long)i * block,
                memory.address() + (long)i * block, block));
        }
        start();
        completions.awaitAll();
        completions.assertAll(TransferStatus.OK);
        final long syncs = counters.get(SystemCounter.STORAGE_SYNCS).get();
        // one per group of writes that landed while no fdatasync of the file was in flight, not one per write
        assertThat(syncs).as("fdatasyncs for %d sync writes", count).isBetween(1L, (long)count / 2);
        System.out.println(count + " sync writes, queue depth " + DEPTH + ": " + syncs + " fdatasyncs");
        assertThat(Files.readAllBytes(file)).isEqualTo(expected);
    }

    @Test
    @Tag("integration")
    void shouldFailSyncWritesWithATypedStatusWhenTheFdatasyncFails() throws Exception
    {
        try (FullLoopFileSystem fs = FullLoopFileSystem.create())
        {
            try
            {
            final int block = 1 << 20;
            final int count = 8;
            final Path syncFile = StorageTestData.sized(fs.mount().resolve("sync.bin"), (long)block * count);
            final Path plainFile = StorageTestData.sized(fs.mount().resolve("plain.bin"), (long)block * count);
            final Region sync = register(syncFile, 0, (long)block * count, REGISTER_FILE_SYNC | REGISTER_FILE_BUFFERED);
            final Region plain = register(plainFile, 0, (long)block * count, REGISTER_FILE_BUFFERED);
            final MemorySegment memory = data.memory(data.randomBytes(block * count));
            start();

            final Completions completions = new Completions(2 * count);
            for (int i = 0; i < count; i++)
            {
                stage.submit(completions.request(i).set(sync.file(), true, (long)i * block,
                    memory.address() + (long)i * block, block));
                stage.submit(completions.request(count + i).set(plain.file(), true, (long)i * block,
                    memory.address() + (long)i * block, block));
            }
            completions.awaitAll();
            for (int i = 0; i < count; i++)
            {
                assertThat(completions.status(i)).as("a sync write whose fdatasync failed")
                    .isIn(TransferStatus.STORAGE_NO_SPACE, TransferStatus.STORAGE_IO_ERROR);
                assertThat(completions.status(count + i)).as("a buffered write: in the page cache, as documented")
                    .isEqualTo(TransferStatus.OK);
            }
            assertThat(counters.get(SystemCounter.STORAGE_SYNCS).get()).isPositive();
            }
            finally
            {
                regions.forEach(FileRegionMapper::unmap); // their descriptors would keep the file system busy
                regions.clear();
            }
        }
    }

    @Test
    void shouldRefuseSubmissionsOnceClosedAndFailWhatWasQueued() throws Exception
    {
        final Path file = StorageTestData.sized(dir.resolve("c.bin"), 8192);
        final Region region = register(file, 0, 8192, 0);
        final MemorySegment memory = arena.allocate(8192, 4096);
        final Completions queued = new Completions(1);
        assertThat(stage.submit(queued.request(0).set(region.file(), false, 0, memory.address(), 4096))).isTrue();
        stage.close();
        queued.awaitAll();
        assertThat(queued.status(0)).isEqualTo(TransferStatus.STORAGE_IO_ERROR);
        final Completions refused = new Completions(1);
        assertThat(stage.submit(refused.request(0).set(region.file(), false, 0, memory.address(), 4096))).isFalse();
        assertThat(refused.status(0)).as("never called").isEqualTo(UNSET);
    }

    @Test
    void shouldAnswerOutOfRangeForARequestPastTheRegion() throws Exception
    {
        final Path file = StorageTestData.sized(dir.resolve("r.bin"), 8192);
        final Region region = register(file, 0, 4096, 0);
        final MemorySegment memory = arena.allocate(8192, 4096);
        start();
        final Completions completions = new Completions(1);
        stage.submit(completions.request(0).set(region.file(), false, 0, memory.address(), 8192));
        completions.awaitAll();
        assertThat(completions.status(0)).isEqualTo(TransferStatus.STORAGE_OUT_OF_RANGE);
    }

    @Test
    void shouldCancelAnOperationTheKernelHoldsPastTheStallBoundAndServeTheNextRequest() throws Exception
    {
        // a FIFO nobody writes: a read of it is an operation the kernel never completes, as a lost one would be
        final Path fifo = dir.resolve("never.fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor()).isZero();
        final int never = FileIo.open(fifo.toString(), FileIo.O_RDWR, 0);
        final Path file = StorageTestData.sized(dir.resolve("after.bin"), 8192);
        final Region region = register(file, 0, 8192, 0);
        // on the regular file's device, so that both requests share one queue and one ring
        final StorageFile stalled = new StorageFile(never, 0, 8192, false, false, "fifo", region.file().device());
        stalled.knownSize = Long.MAX_VALUE; // a FIFO has no size to check
        final StorageStage stalling = new StorageStage(DEPTH, 1024, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
            counters.get(SystemCounter.STORAGE_SYNCS), StorageStage.DEFAULT_AWAIT_NANOS, 300_000_000L);
        final AgentRunner stallingRunner = new AgentRunner(new BackoffIdleStrategy(10, 10, 1_000, 1_000_000),
            Throwable::printStackTrace, null, stalling);
        AgentRunner.startOnThread(stallingRunner);
        try
        {
            final MemorySegment memory = arena.allocate(8192, 4096);
            final Completions lost = new Completions(1);
            assertThat(stalling.submit(lost.request(0).set(stalled, false, 0, memory.address(), 4096))).isTrue();
            lost.awaitAll();
            assertThat(lost.status(0)).as("cancelled after the stall, not waited for")
                .isEqualTo(TransferStatus.STORAGE_IO_ERROR);

            final byte[] expected = data.randomBytes(8192);
            final Completions next = new Completions(1);
            assertThat(stalling.submit(next.request(0).set(region.file(), true, 0,
                data.memory(expected).address(), 8192))).isTrue();
            next.awaitAll();
            assertThat(next.status(0)).as("the same queue serves the next request").isEqualTo(TransferStatus.OK);
            assertThat(Files.readAllBytes(file)).isEqualTo(expected);
        }
        finally
        {
            stallingRunner.close();
            FileIo.close(never);
        }
        assertThat(stalling.stallCancels()).isEqualTo(1);
    }

    /**
     * One request object per index, each recording its status; a second completion of one request fails the test.
     */
    private static final class Completions
    {
        private final StorageRequest[] requests;
        private final AtomicIntegerArray statuses;
        private final CountDownLatch done;
        private volatile String error;

        Completions(final int count)
        {
            requests = new StorageRequest[count];
            statuses = new AtomicIntegerArray(count);
            done = new CountDownLatch(count);
            for (int i = 0; i < count; i++)
            {
                final int index = i;
                statuses.set(i, UNSET);
                requests[i] = new StorageRequest((request, status) ->
                {
                    if (!statuses.compareAndSet(index, UNSET, status))
                    {
                        error = "request " + index + " completed twice";
                    }
                    done.countDown();
                });
            }
        }

        StorageRequest request(final int index)
        {
            return requests[index];
        }

        int status(final int index)
        {
            return statuses.get(index);
        }

        void awaitAll() throws InterruptedException
        {
            assertThat(done.await(60, TimeUnit.SECONDS)).as("every request completed").isTrue();
            assertThat(error).isNull();
        }

        void assertAll(final int status)
        {
            for (int i = 0; i < requests.length; i++)
            {
                assertThat(statuses.get(i)).as("request %d", i).isEqualTo(status);
            }
        }
    }

    private void start()
    {
        runner = new AgentRunner(new BackoffIdleStrategy(10, 10, 1_000, 1_000_000), Throwable::printStackTrace,
            null, stage);
        AgentRunner.startOnThread(runner);
    }

    private Region register(final Path file, final long offset, final long length, final int flags)
    {
        final int fd = FileIo.open(file.toString(), FileIo.O_RDWR, 0);
        final Region region = mapper.map(fd, new FileRegistration(1, ADDRESS, length, offset, flags));
        regions.add(region);
        return region;
    }
}
