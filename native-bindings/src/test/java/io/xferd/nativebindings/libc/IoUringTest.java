package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link IoUring} moving real bytes to and from real files: on the machine's disk (a temp dir) with O_DIRECT where
 * the file system allows it, and on tmpfs ({@code /dev/shm}).
 */
@Timeout(60)
class IoUringTest
{
    private static final int BLOCK = 64 * 1024;
    private static final int BLOCKS = 16;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private IoUring ring;
    private final long[] results = new long[64];
    private int reaped;

    @BeforeEach
    void open()
    {
        assumeTrue(IoUring.isAvailable(), "io_uring disabled in this kernel or container");
        ring = IoUring.open(8);
    }

    @AfterEach
    void close()
    {
        if (ring != null)
        {
            ring.close();
        }
        arena.close();
    }

    @Test
    void shouldWriteThenReadBackAFileOnDiskWithODirect() throws IOException
    {
        roundTrip(dir.resolve("disk.bin"), true);
    }

    @Test
    void shouldWriteThenReadBackAFileOnTmpfsBuffered() throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm), "no /dev/shm");
        final Path file = Files.createTempFile(shm, "xferd-uring", ".bin");
        try
        {
            roundTrip(file, false);
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldReportTheRingSizeAndRefuseWhenFull() throws IOException
    {
        assertThat(ring.entries()).isEqualTo(8);
        final int fd = FileIo.open(Files.createFile(dir.resolve("f")).toString(), FileIo.O_RDWR, 0);
        try
        {
            final MemorySegment buffer = arena.allocate(4096, 4096);
            for (int i = 0; i < 8; i++)
            {
                assertThat(ring.prepareRead(fd, buffer.address(), 16, 0, i)).isTrue();
            }
            assertThat(ring.prepareRead(fd, buffer.address(), 16, 0, 8)).isFalse();
            assertThat(ring.freeSlots()).isZero();
            waitFor(8);
            assertThat(ring.freeSlots()).isEqualTo(8);
            for (int i = 0; i < 8; i++)
            {
                assertThat(results[i]).as("read of an empty file").isZero();
            }
        }
        finally
        {
            FileIo.close(fd);
        }
    }

    @Test
    void shouldCompleteWithMinusErrnoForABadDescriptor()
    {
        final MemorySegment buffer = arena.allocate(4096, 4096);
        ring.prepareRead(9999, buffer.address(), 16, 0, 3);
        waitFor(1);
        assertThat(results[3]).isEqualTo(-Errno.EBADF);
    }

    @Test
    void shouldTellAFileOnTmpfsByItsFileSystemType() throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(shm) &&
            "tmpfs".equals(Files.getFileStore(shm).type()), "no tmpfs at /dev/shm");
        final Path file = Files.createTempFile(shm, "xferd-statfs", ".bin");
        try
        {
            final int fd = FileIo.open(file.toString(), FileIo.O_RDONLY, 0);
            try
            {
                assertThat(FileIo.fileSystemType(fd)).isEqualTo(FileIo.TMPFS_MAGIC);
            }
            finally
            {
                FileIo.close(fd);
            }
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldReadShortAtTheEndOfAFile() throws IOException
    {
        final Path file = dir.resolve("short");
        Files.write(file, new byte[100]);
        final int fd = FileIo.open(file.toString(), FileIo.O_RDONLY, 0);
        try
        {
            assertThat(FileIo.size(fd)).isEqualTo(100);
            assertThat(FileIo.mode(fd) & FileIo.S_IFMT).isEqualTo(FileIo.S_IFREG);
            assertThat(FileIo.accessMode(fd)).isEqualTo(FileIo.O_RDONLY);
            final MemorySegment buffer = arena.allocate(4096, 4096);
            ring.prepareRead(fd, buffer.address(), 4096, 0, 0);
            waitFor(1);
            assertThat(results[0]).isEqualTo(100);
        }
        finally
        {
            FileIo.close(fd);
        }
    }

    @Test
    void shouldEndAWaitWhenAPolledEventFdIsSignalledByAnotherThread() throws Exception
    {
        try (EventFd wake = EventFd.open())
        {
            assertThat(wake.drain()).as("nothing signalled yet").isZero();
            assertThat(ring.preparePollIn(wake.fd(), 5)).isTrue();
            ring.submit();
            final Thread signaller = Thread.ofPlatform().start(wake::signal);
            // a wait that only the signal can end within the test's time
            for (int i = 0; i < 100 && reaped == 0; i++)
            {
                ring.submitAndWait(1, 3_600_000_000_000L);
                reaped += ring.reap((userData, result) -> results[(int)userData] = result);
            }
            signaller.join();
            assertThat(reaped).isEqualTo(1);
            assertThat(results[5] & IoUringLayouts.POLLIN).isEqualTo(IoUringLayouts.POLLIN);
            assertThat(wake.drain()).isEqualTo(1);
            assertThat(wake.drain()).isZero();
        }
    }

    @Test
    void shouldTimeOutAWaitThenCancelWhatIsInFlight()
    {
        try (EventFd never = EventFd.open())
        {
            ring.preparePollIn(never.fd(), 1);
            ring.submitAndWait(1, 20_000_000L); // 20 ms: returns with nothing completed
            assertThat(ring.reap((userData, result) -> results[(int)userData] = result)).isZero();

            assertThat(ring.prepareCancelAll(2)).isTrue();
            waitFor(2);
            assertThat(results[1]).as("the poll, cancelled").isEqualTo(-Errno.ECANCELED);
            assertThat(results[2]).as("the cancellation: one operation cancelled").isEqualTo(1);
        }
    }

    private void roundTrip(final Path file, final boolean wantDirect) throws IOException
    {
        final int fd = FileIo.open(file.toString(), FileIo.O_RDWR | FileIo.O_CREAT, 0600);
        try
        {
            final boolean direct = wantDirect && FileIo.trySetDirect(fd);
            final MemorySegment source = arena.allocate((long)BLOCK * BLOCKS, 4096);
            final byte[] expected = new byte[BLOCK * BLOCKS];
            new Random(17).nextBytes(expected);
            MemorySegment.copy(expected, 0, source, JAVA_BYTE, 0, expected.length);

            for (int i = 0; i < BLOCKS; i += 8)
            {
                for (int j = i; j < i + 8; j++)
                {
                    assertThat(ring.prepareWrite(fd, source.address() + (long)j * BLOCK, BLOCK, (long)j * BLOCK, j))
                        .isTrue();
                }
                waitFor(8);
            }
            ring.prepareFsync(fd, true, 63);
            waitFor(1);
            assertThat(results[63]).as("fdatasync").isZero();
            for (int j = 0; j < BLOCKS; j++)
            {
                assertThat(results[j]).as("write %d", j).isEqualTo(BLOCK);
            }
            assertThat(Files.readAllBytes(file)).isEqualTo(expected);
            assertThat(FileIo.isDirect(fd)).isEqualTo(direct);

            final MemorySegment back = arena.allocate((long)BLOCK * BLOCKS, 4096);
            for (int i = BLOCKS - 8; i >= 0; i -= 8)
            {
                for (int j = i; j < i + 8; j++)
                {
                    ring.prepareRead(fd, back.address() + (long)j * BLOCK, BLOCK, (long)j * BLOCK, 32 + j);
                }
                waitFor(8);
            }
            for (int j = 0; j < BLOCKS; j++)
            {
                assertThat(results[32 + j]).as("read %d", j).isEqualTo(BLOCK);
            }
            assertThat(back.toArray(JAVA_BYTE)).isEqualTo(expected);
        }
        finally
        {
            FileIo.close(fd);
        }
    }

    private void waitFor(final int completions)
    {
        reaped = 0;
        for (int spins = 0; reaped < completions && spins < 10_000; spins++)
        {
            ring.submitAndWait(completions - reaped);
            reaped += ring.reap((userData, result) -> results[(int)userData] = result);
        }
        assertThat(reaped).isEqualTo(completions);
    }
}
