package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The storage stage with an operation the kernel keeps as long as the test wants: a read of a FIFO that nobody has
 * written to (a "file" whose device never answers). A new request for the same device must not wait for it (the
 * submission wakes the stage out of {@code io_uring_enter}), and closing the stage must take the read back from the
 * kernel before its request is failed: once a request completes, the kernel writes nothing more into its memory.
 */
@Timeout(60)
class StorageStageInFlightTest
{
    private static final long DEVICE = 0x7e57_0001L;
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    private final StorageTestData data = new StorageTestData(23);
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final List<StorageFile> files = new ArrayList<>();
    private final BlockingQueue<Object[]> completions = new ArrayBlockingQueue<>(16);
    private StorageStage stage;
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
        files.forEach(StorageFile::close);
        data.close();
    }

    @Test
    void shouldStartANewRequestAtOnceWhileTheDeviceHoldsAnotherOne() throws Exception
    {
        // a sleep in the kernel that only a completion or a wake-up can end within the test's time
        start(TimeUnit.HOURS.toNanos(1));
        final Path fifo = fifo();
        final StorageFile pipe = pipeFile(fifo);
        final MemorySegment readInto = data.memory(new byte[BLOCK]);
        final StorageRequest stuck = request("stuck").set(pipe, false, 0, readInto.address(), BLOCK);
        assertThat(stage.submit(stuck)).isTrue();
        awaitSleeping();

        final Path disk = StorageTestData.sized(dir.resolve("disk.bin"), 16L * BLOCK);
        final StorageFile file = file(disk);
        final byte[] expected = data.randomBytes(16 * BLOCK);
        final MemorySegment memory = data.memory(expected);
        assertThat(stage.submit(request("write").set(file, true, 0, memory.address(), expected.length))).isTrue();

        assertThat(next()).as("the write completed while the FIFO read is still in the kernel")
            .containsExactly("write", TransferStatus.OK);
        assertThat(Files.readAllBytes(disk)).isEqualTo(expected);
        assertThat(stage.wakeUps()).isGreaterThanOrEqualTo(1);

        final byte[] sent = data.randomBytes(BLOCK);
        try (FileOutputStream out = new FileOutputStream(fifo.toFile()))
        {
            out.write(sent);
        }
        assertThat(next()).containsExactly("stuck", TransferStatus.OK);
        assertThat(readInto.toArray(JAVA_BYTE)).isEqualTo(sent);
    }

    @Test
    void shouldTakeAnOperationBackFromTheKernelBeforeFailingItsRequestOnClose() throws Exception
    {
        start(StorageStage.DEFAULT_AWAIT_NANOS);
        final Path fifo = fifo();
        final StorageFile pipe = pipeFile(fifo);
        final MemorySegment readInto = data.memory(new byte[BLOCK]);
        assertThat(stage.submit(request("stuck").set(pipe, false, 0, readInto.address(), BLOCK))).isTrue();
        awaitSleeping();

        runner.close(); // the stage's onClose: cancel what the kernel holds, reap it, then fail it
        runner = null;
        assertThat(next()).containsExactly("stuck", TransferStatus.STORAGE_IO_ERROR);

        // the read is gone from the kernel: bytes written now stay in the FIFO and never reach the request's memory
        final byte[] sent = data.randomBytes(BLOCK);
        try (FileOutputStream out = new FileOutputStream(fifo.toFile()))
        {
            out.write(sent);
        }
        final byte[] left = new byte[BLOCK];
        try (FileInputStream in = new FileInputStream(fifo.toFile()))
        {
            assertThat(in.readNBytes(left, 0, BLOCK)).isEqualTo(BLOCK);
        }
        assertThat(left).isEqualTo(sent);
        assertThat(readInto.toArray(JAVA_BYTE)).containsOnly((byte)0);
        assertThat(stage.submit(request("late").set(pipe, false, 0, readInto.address(), BLOCK)))
            .as("a closed stage takes nothing").isFalse();
    }

    private void start(final long awaitNanos)
    {
        stage = new StorageStage(16, 64, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
            counters.get(SystemCounter.STORAGE_SYNCS), awaitNanos);
        runner = new AgentRunner(new BackoffIdleStrategy(10, 10, 1_000, 1_000_000), Throwable::printStackTrace,
            null, stage);
        AgentRunner.startOnThread(runner);
    }

    private StorageRequest request(final String name)
    {
        return new StorageRequest((request, status) -> completions.add(new Object[] {name, status}));
    }

    private Object[] next() throws InterruptedException
    {
        final Object[] completion = completions.poll(30, TimeUnit.SECONDS);
        assertThat(completion).as("a completion within 30 s").isNotNull();
        return completion;
    }

    private void awaitSleeping() throws InterruptedException
    {
        for (int i = 0; i < 30_000 && !stage.isSleeping(); i++)
        {
            Thread.sleep(1);
        }
        assertThat(stage.isSleeping()).as("the stage sleeps in io_uring_enter on the FIFO read").isTrue();
    }

    private Path fifo() throws IOException, InterruptedException
    {
        final Path fifo = dir.resolve("device.fifo");
        final Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        assertThat(mkfifo.waitFor(30, TimeUnit.SECONDS) && mkfifo.exitValue() == 0).as("mkfifo").isTrue();
        return fifo;
    }

    /**
     * A FIFO as a storage region of the test's device: opened read-write (so that opening it blocks nobody), its
     * size taken as known (a FIFO has none), so a read waits in the kernel until someone writes.
     */
    private StorageFile pipeFile(final Path fifo)
    {
        final StorageFile file = new StorageFile(FileIo.open(fifo.toString(), FileIo.O_RDWR, 0), 0, BLOCK, false,
            false, StorageFile.FILE, DEVICE);
        file.knownSize = Long.MAX_VALUE;
        files.add(file);
        return file;
    }

    private StorageFile file(final Path path)
    {
        final StorageFile file = new StorageFile(FileIo.open(path.toString(), FileIo.O_RDWR, 0), 0,
            Files.exists(path) ? path.toFile().length() : 0, false, false, StorageFile.FILE, DEVICE);
        files.add(file);
        return file;
    }
}
