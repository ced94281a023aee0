package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.FileRegionMapper;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
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
import java.util.Random;

import static io.xferd.ipc.ControlMessages.REGISTER_FILE_BUFFERED;
import static io.xferd.ipc.ControlMessages.REGISTER_FILE_SYNC;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Storage regions as the data plane sees them: a descriptor registered by {@link FileRegionMapper}, bytes moved by
 * {@link StorageIo}, every byte checked against what the file holds, and every failure a typed status.
 */
@Timeout(60)
class StorageIoTest
{
    private static final long ADDRESS = FileRegistration.FILE_ADDRESS_BASE;
    private static final int LENGTH = 4 << 20;

    @TempDir
    Path dir;

    private final StorageTestData data = new StorageTestData(42);
    private final Arena arena = data.arena;
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final StorageIo io = new StorageIo(8, counters.get(SystemCounter.STORAGE_BYTES_READ),
        counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS));
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
        io.close();
        regions.forEach(FileRegionMapper::unmap);
        data.close();
    }

    @Test
    void shouldWriteAndReadBackAlignedRangesOfAFileOnDiskWithODirect() throws IOException
    {
        final Path file = StorageTestData.sized(dir.resolve("disk.bin"), LENGTH + 8192);
        final Region region = register(file, FileIo.O_RDWR, 8192, LENGTH, 0);
        final byte[] expected = data.randomBytes(LENGTH);
        final MemorySegment memory = data.memory(expected);

        assertThat(io.write(region.file(), 0, memory.address(), LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(Arrays.copyOfRange(Files.readAllBytes(file), 8192, 8192 + LENGTH)).isEqualTo(expected);

        final MemorySegment back = arena.allocate(LENGTH, 4096);
        assertThat(io.read(region.file(), 0, back.address(), LENGTH)).isEqualTo(TransferStatus.OK);
        assertThat(back.toArray(JAVA_BYTE)).isEqualTo(expected);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_WRITTEN).get()).isEqualTo(LENGTH);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_READ).get()).isEqualTo(LENGTH);
        System.out.println("disk file O_DIRECT: " + region.file().direct());
    }

    @Test
    void shouldLeaveTheClientsDescriptorFlagsAloneWhenGoingDirect() throws IOException
    {
        final Path file = StorageTestData.sized(dir.resolve("client.bin"), 8192);
        final int clientFd = FileIo.open(file.toString(), FileIo.O_RDWR, 0);
        try
        {
            final Region region = mapper.map(dup(clientFd), new FileRegistration(1, ADDRESS, 8192, 0, 0));
            regions.add(region);
            assertThat(FileIo.isDirect(clientFd)).as("the client's open file description").isFalse();
            assertThat(FileIo.isDirect(region.file().fd())).isEqualTo(region.file().direct());
        }
        finally
        {
            FileIo.close(clientFd);
        }
    }

    /**
     * What SCM_RIGHTS gives the daemon: another descriptor of the same open file description.
     */
    private static int dup(final int fd)
    {
        return FileIo.duplicate(fd);
    }

    @Test
    void shouldKeepTheNeighboursOfUnalignedWritesOnAnODirectFile() throws IOException
    {
        final byte[] original = data.randomBytes(1 << 20);
        final Path file = dir.resolve("edges.bin");
        Files.write(file, original);
        final Region region = register(file, FileIo.O_RDWR, 0, original.length, 0);
        final byte[] expected = original.clone();
        // unaligned file offsets, lengths and memory addresses, across and inside blocks
        final int[][] writes = {{1, 10}, {4095, 2}, {5000, 70_000}, {8192, 4096}, {300_001, 555_555}, {1_048_000, 576}};
        for (final int[] write : writes)
        {
            final byte[] bytes = data.randomBytes(write[1]);
            final MemorySegment memory = arena.allocate(write[1] + 3L, 8).asSlice(3);
            MemorySegment.copy(bytes, 0, memory, JAVA_BYTE, 0, bytes.length);
            assertThat(io.write(region.file(), write[0], memory.address(), write[1])).isEqualTo(TransferStatus.OK);
            System.arraycopy(bytes, 0, expected, write[0], bytes.length);
        }
        assertThat(Files.readAllBytes(file)).isEqualTo(expected);

        final MemorySegment back = arena.allocate(700_000 + 5L, 8).asSlice(5);
        assertThat(io.read(region.file(), 12_345, back.address(), 700_000)).isEqualTo(TransferStatus.OK);
        assertThat(back.asSlice(0, 700_000).toArray(JAVA_BYTE))
            .isEqualTo(Arrays.copyOfRange(expected, 12_345, 12_345 + 700_000));
    }

    @Test
    void shouldMoveAnyAlignmentOnTmpfsBufferedAndSyncWhenAsked() throws IOException
    {
        final Path file = data.shm(LENGTH);
        final Region region = register(file, FileIo.O_RDWR, 0, LENGTH, REGISTER_FILE_SYNC | REGISTER_FILE_BUFFERED);
        assertThat(region.file().direct()).isFalse();
        assertThat(region.file().sync()).isTrue();
        final byte[] expected = data.randomBytes(LENGTH - 7);
        final MemorySegment memory = data.memory(expected);

        assertThat(io.write(region.file(), 7, memory.address(), expected.length)).isEqualTo(TransferStatus.OK);
        assertThat(Arrays.copyOfRange(Files.readAllBytes(file), 7, LENGTH)).isEqualTo(expected);
        final MemorySegment back = arena.allocate(expected.length, 1);
        assertThat(io.read(region.file(), 7, back.address(), expected.length)).isEqualTo(TransferStatus.OK);
        assertThat(back.toArray(JAVA_BYTE)).isEqualTo(expected);
    }

    @Test
    void shouldFailWithTruncatedWhenTheFileShrinksUnderTheRegionAndNotRegrowIt() throws IOException
    {
        final Path file = StorageTestData.sized(dir.resolve("shrinks.bin"), LENGTH);
        final Region region = register(file, FileIo.O_RDWR, 0, LENGTH, 0);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(LENGTH / 2);
        }
        final MemorySegment memory = arena.allocate(4096, 4096);

        assertThat(io.read(region.file(), 0, memory.address(), 4096)).isEqualTo(TransferStatus.STORAGE_TRUNCATED);
        assertThat(io.write(region.file(), LENGTH - 4096, memory.address(), 4096))
            .isEqualTo(TransferStatus.STORAGE_TRUNCATED);
        assertThat(Files.size(file)).isEqualTo(LENGTH / 2);
        assertThat(counters.get(SystemCounter.STORAGE_ERRORS).get()).isEqualTo(2);
        assertThat(counters.get(SystemCounter.STORAGE_BYTES_WRITTEN).get()).isZero();
    }

    @Test
    void shouldFailWithPermissionWhenWritingAFileTheClientOpenedReadOnly() throws IOException
    {
        final Path file = StorageTestData.sized(dir.resolve("readonly.bin"), 8192);
        final Region region = register(file, FileIo.O_RDONLY, 0, 8192, 0);
        final MemorySegment memory = arena.allocate(8192, 4096);

        assertThat(io.write(region.file(), 0, memory.address(), 8192)).isEqualTo(TransferStatus.STORAGE_PERMISSION);
        assertThat(io.read(region.file(), 0, memory.address(), 8192)).isEqualTo(TransferStatus.OK);
    }

    @Test
    void shouldRefuseRangesOutsideTheFileAndDescriptorsThatAreNotFiles() throws IOException
    {
        final Path file = StorageTestData.sized(dir.resolve("small.bin"), 8192);
        final int fd = FileIo.open(file.toString(), FileIo.O_RDWR, 0);
        assertThatThrownBy(() -> mapper.map(fd, new FileRegistration(1, ADDRESS, 8192, 4096, 0)))
            .isInstanceOf(RegistrationRefusedException.class).hasMessageContaining("out of range");
        final int dirFd = FileIo.open(dir.toString(), FileIo.O_RDONLY, 0);
        assertThatThrownBy(() -> mapper.map(dirFd, new FileRegistration(1, ADDRESS, 1, 0, 0)))
            .isInstanceOf(RegistrationRefusedException.class).hasMessageContaining("neither a regular file");
    }

    @Test
    void shouldAnswerOutOfRangeForARequestPastTheRegion() throws IOException
    {
        final Path file = StorageTestData.sized(dir.resolve("r.bin"), 8192);
        final Region region = register(file, FileIo.O_RDWR, 0, 4096, 0);
        final MemorySegment memory = arena.allocate(8192, 4096);
        assertThat(io.read(region.file(), 0, memory.address(), 8192)).isEqualTo(TransferStatus.STORAGE_OUT_OF_RANGE);
    }

    @Test
    void shouldFailARequestWhoseOperationNeverCompletesAndServeTheNextOne() throws Exception
    {
        // a FIFO nobody writes: a read of it is an operation the kernel never completes, as a lost one would be
        final Path fifo = dir.resolve("never.fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor()).isZero();
        final int never = FileIo.open(fifo.toString(), FileIo.O_RDWR, 0);
        final StorageIo stalling = new StorageIo(4, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS), null,
            1_000_000_000L); // a second: the write after it must not be cancelled on a loaded machine
        try
        {
            final MemorySegment memory = arena.allocate(8192, 4096);
            assertThat(stalling.pipelined(false, never, 0, memory.address(), 8192))
                .as("cancelled after the stall, not waited for")
                .isEqualTo(TransferStatus.STORAGE_IO_ERROR);

            final Path file = StorageTestData.sized(dir.resolve("after.bin"), 8192);
            final Region region = register(file, FileIo.O_RDWR, 0, 8192, 0);
            final byte[] expected = data.randomBytes(8192);
            assertThat(stalling.write(region.file(), 0, data.memory(expected).address(), 8192))
                .as("the same ring serves the next request").isEqualTo(TransferStatus.OK);
            assertThat(Files.readAllBytes(file)).isEqualTo(expected);
        }
        finally
        {
            stalling.close();
            FileIo.close(never);
        }
    }

    private Region register(final Path file, final int mode, final long offset, final long length, final int flags)
    {
        final int fd = FileIo.open(file.toString(), mode, 0);
        final Region region = mapper.map(fd, new FileRegistration(1, ADDRESS, length, offset, flags));
        regions.add(region);
        return region;
    }
}
