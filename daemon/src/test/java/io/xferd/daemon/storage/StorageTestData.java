package io.xferd.daemon.storage;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the storage tests move: seeded random bytes, page-aligned memory holding them, and files of a given size on
 * the test's disk directory or on tmpfs, all released by {@link #close()}.
 */
final class StorageTestData implements AutoCloseable
{
    final Arena arena = Arena.ofShared();
    private final List<Path> shmFiles = new ArrayList<>();
    private final Random random;

    StorageTestData(final long seed)
    {
        this.random = new Random(Long.getLong("xferd.test.seed", seed));
    }

    /**
     * @return {@code file}, created or resized to {@code size} bytes (sparse).
     */
    static Path sized(final Path file, final long size) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(size);
        }
        return file;
    }

    /**
     * @return a new file of {@code size} bytes on tmpfs (the test is skipped where there is no /dev/shm).
     */
    Path shm(final long size) throws IOException
    {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")), "no /dev/shm");
        final Path file = Files.createTempFile(Path.of("/dev/shm"), "xferd-storage", ".bin");
        shmFiles.add(file);
        return sized(file, size);
    }

    byte[] randomBytes(final int length)
    {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /**
     * @return 0 .. count-1 in a seeded random order.
     */
    int[] shuffled(final int count)
    {
        final int[] order = new int[count];
        for (int i = 0; i < count; i++)
        {
            order[i] = i;
        }
        for (int i = count - 1; i > 0; i--)
        {
            final int j = random.nextInt(i + 1);
            final int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /**
     * @return page-aligned memory holding {@code bytes} (O_DIRECT accepts it).
     */
    MemorySegment memory(final byte[] bytes)
    {
        final MemorySegment memory = arena.allocate(bytes.length, 4096);
        MemorySegment.copy(bytes, 0, memory, JAVA_BYTE, 0, bytes.length);
        return memory;
    }

    @Override
    public void close() throws IOException
    {
        for (final Path file : shmFiles)
        {
            Files.deleteIfExists(file);
        }
        arena.close();
    }
}
