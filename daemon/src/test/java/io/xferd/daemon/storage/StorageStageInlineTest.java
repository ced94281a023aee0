package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.FileRegionMapper;
import io.xferd.daemon.memory.Region;
import io.xferd.ipc.FileRegistration;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.IoUring;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An inline stage (a transfer worker's own): its owner submits and runs it on one thread, so a request goes from the
 * owner straight into the device's ring and completes on the owner's thread, inside {@link StorageStage#doWork},
 * never inside {@link StorageStage#submit}. The same guarantees as the stage with a thread: requests overlap up to
 * the queue depth, every byte lands, a failed request fails alone and typed, close takes back what the kernel holds
 * and fails what is left. Real files on disk and on tmpfs, every byte checked against the file.
 */
@Timeout(120)
class StorageStageInlineTest
{
    private static final long ADDRESS = FileRegistration.FILE_ADDRESS_BASE;
    private static final int DEPTH = 16;
    private static final int UNSET = -1;
    /** Bounds every loop that drives the stage (the device answers long before). */
    private static final int MAX_DUTY_CYCLES = 10_000_000;

    @TempDir
    Path dir;

    private final StorageTestData data = new StorageTestData(23);
    private final Arena arena = data.arena;
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final StorageStage stage = StorageStage.inline(DEPTH, counters.get(SystemCounter.STORAGE_BYTES_READ),
        counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
        counters.get(SystemCounter.STORAGE_SYNCS));
    private final FileRegionMapper mapper = new FileRegionMapper();
    private final List<Region> regions = new ArrayList<>();

    @BeforeEach
    void requireIoUring()
    {
        assumeTrue(IoUring.isAvailable(), "io_uring not available here");
    }

    @AfterEach
    void close() throws IOException
    {
        stage.close();
        regions.forEach(FileRegionMapper::unmap);
        data.close();
    }

    @Test
    void shouldOverlapRequestsOnTheDeviceAndCompleteThemOnTheOwnersThreadInDoWork() throws Exception
    {
        final int block = 64 * 1024;
        final int count = 128;
        final Path file = StorageTestData.sized(dir.resolve("disk.bin"), (long)block * count);
        final Region region = register(file, 0, (long)block * count, 0);
        final byte[] expected = data.randomBytes(block * count);
        final MemorySegment memory = data.memory(expected);
        final int[] order = data.shuffled(count);
        assertThat(stage.isInline()).isTrue();

        final Completions writes = new Completions(count);
        for (final int i : order)
        {
            assertThat(stage.submit(writes.request(i).set(region.file(), true, (long)i * block,
                memory.address() + (long)i * block, block))).isTrue();
        }
        assertThat(writes.completed).as("nothing completes inside submit").isZero();
        assertThat(stage.isIdle()).isFalse();
        runUntilDone(writes);
        writes.assertAll(TransferStatus.OK);
        assertThat(writes.otherThread).as("listeners called on the owner's thread").isFalse();
        assertThat(stage.peakInFlight()).as("operations of different requests in flight together").isEqualTo(DEPTH);
        assertThat(stage.isIdle()).isTrue();
        assertThat(Files.readAllBytes(file)).isEqualTo(expected);

        final MemorySegment back = arena.allocate((long)block * count, 4096);
        final Completions reads = new Completions(count);
        for (final int i : order)
        {
            stage.submit(reads.request(i).set(region.file(), false, (long)i * block, back.address() + (long)i * block,
                block));
        }
        runUntilDone(reads);
        reads.assertAll(TransferStatus.OK);
        assertThat(back.toArray(JAVA_BYTE)).isEqualTo(expected);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_WRITTEN).get()).isEqualTo((long)block * count);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_READ).get()).isEqualTo((long)block * count);
    }

    @Test
    void shouldCutLargeRequestsAndMoveAnyAlignmentBufferedOnTmpfs() throws Exception
    {
        final int length = 3 * DeviceQueue.MAX_OPERATION + 4_321;
        final Path file = data.shm(length + 100);
        final Region region = register(file, 0, length + 100, io.xferd.ipc.ControlMessages.REGISTER_FILE_BUFFERED);
        final byte[] expected = data.randomBytes(length);
        final MemorySegment memory = arena.allocate(length + 5L, 8).asSlice(5);
        MemorySegment.copy(expected, 0, memory, JAVA_BYTE, 0, length);

        final Completions write = new Completions(1);
        stage.submit(write.request(0).set(region.file(), true, 31, memory.address(), length));
        runUntilDone(write);
        write.assertAll(TransferStatus.OK);
        assertThat(Arrays.copyOfRange(Files.readAllBytes(file), 31, 31 + length)).isEqualTo(expected);
    }

    @Test
    void shouldFailOnlyTheRequestsOfATruncatedFileAndThoseOutOfRange() throws Exception
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

        final Completions completions = new Completions(33);
        for (int i = 0; i < 16; i++)
        {
            stage.submit(completions.request(2 * i).set(shrunk.file(), true, (long)i * block,
                memory.address() + (long)i * block, block));
            stage.submit(completions.request(2 * i + 1).set(intact.file(), true, (long)i * block,
                memory.address() + (long)i * block, block));
        }
        stage.submit(completions.request(32).set(intact.file(), false, 15L * block, memory.address(), 2L * block));
        assertThat(completions.completed).as("even a request refused at once completes in doWork").isZero();
        runUntilDone(completions);
        for (int i = 0; i < 16; i++)
        {
            assertThat(completions.status(2 * i)).isEqualTo(TransferStatus.STORAGE_TRUNCATED);
            assertThat(completions.status(2 * i + 1)).isEqualTo(TransferStatus.OK);
        }
        assertThat(completions.status(32)).isEqualTo(TransferStatus.STORAGE_OUT_OF_RANGE);
        assertThat(Files.size(shrinking)).as("never regrown").isEqualTo(8L * block);
        assertThat(Files.readAllBytes(whole)).isEqualTo(expected);
        assertThat(counters.get(SystemCounter.STORAGE_ERRORS).get()).isEqualTo(17);
    }

    @Test
    void shouldFailWhatIsQueuedOrInFlightOnCloseAndRefuseLaterSubmissions() throws Exception
    {
        final int block = 1 << 20;
        final int count = 4 * DEPTH;
        final Path file = StorageTestData.sized(dir.resolve("c.bin"), (long)block * count);
        final Region region = register(file, 0, (long)block * count, 0);
        final MemorySegment memory = arena.allocate((long)block * count, 4096);
        final Completions queued = new Completions(count);
        for (int i = 0; i < count; i++)
        {
            stage.submit(queued.request(i).set(region.file(), false, (long)i * block,
                memory.address() + (long)i * block, block));
        }
        stage.doWork(); // some in flight in the kernel, the rest waiting
        stage.close();
        assertThat(queued.completed).as("every request completed once, in flight or not").isEqualTo(count);
        for (int i = 0; i < count; i++)
        {
            assertThat(queued.status(i)).as("request %d", i).isIn(TransferStatus.OK, TransferStatus.STORAGE_IO_ERROR);
        }
        final Completions refused = new Completions(1);
        assertThat(stage.submit(refused.request(0).set(region.file(), false, 0, memory.address(), 4096))).isFalse();
        assertThat(refused.status(0)).as("never called").isEqualTo(UNSET);
    }

    private void runUntilDone(final Completions completions)
    {
        for (int cycle = 0; cycle < MAX_DUTY_CYCLES && completions.completed < completions.statuses.length; cycle++)
        {
            if (stage.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
        assertThat(completions.completed).as("every request completed").isEqualTo(completions.statuses.length);
        assertThat(completions.error).isNull();
    }

    /**
     * One request per index, each recording its status; called on this test's thread only, which it checks.
     */
    private static final class Completions
    {
        private final StorageRequest[] requests;
        private final int[] statuses;
        private final Thread owner = Thread.currentThread();
        private int completed;
        private boolean otherThread;
        private String error;

        Completions(final int count)
        {
            requests = new StorageRequest[count];
            statuses = new int[count];
            Arrays.fill(statuses, UNSET);
            for (int i = 0; i < count; i++)
            {
                final int index = i;
                requests[i] = new StorageRequest((request, status) ->
                {
                    otherThread |= Thread.currentThread() != owner;
                    if (statuses[index] != UNSET)
                    {
                        error = "request " + index + " completed twice";
                    }
                    statuses[index] = status;
                    completed++;
                });
            }
        }

        StorageRequest request(final int index)
        {
            return requests[index];
        }

        int status(final int index)
        {
            return statuses[index];
        }

        void assertAll(final int status)
        {
            for (int i = 0; i < requests.length; i++)
            {
                assertThat(statuses[i]).as("request %d", i).isEqualTo(status);
            }
        }
    }

    private Region register(final Path file, final long offset, final long length, final int flags)
    {
        final int fd = FileIo.open(file.toString(), FileIo.O_RDWR, 0);
        final Region region = mapper.map(fd, new FileRegistration(1, ADDRESS, length, offset, flags));
        regions.add(region);
        return region;
    }
}
