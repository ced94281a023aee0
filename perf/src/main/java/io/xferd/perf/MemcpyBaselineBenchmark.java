package io.xferd.perf;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * The baseline of {@link LocalBandwidthBenchmark}: {@code MemorySegment.copy} of {@link LocalBandwidthBenchmark#BATCH}
 * blocks of {@link #blockSize} bytes between two files in /dev/shm mapped with {@link FileChannel#map} into an
 * {@link Arena}, one thread, no daemon. One operation moves the same bytes as one xferd batch, so the ratio of
 * the two throughputs is the daemon's efficiency against a plain one-copy memcpy. Sample mode, as the benchmark it
 * is the baseline of, so both are compared by their median and their mean.
 */
@State(Scope.Benchmark)
@Threads(1)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MemcpyBaselineBenchmark extends ForkedWithXferdFlags
{
    @Param({"4096", "65536", "1048576", "16777216"})
    public int blockSize;

    /** As {@link LocalBandwidthBenchmark#layout}: one copy per block either way, into block i or BATCH-1-i. */
    @Param({"adjacent"})
    public String layout;

    private boolean scattered;

    private Path directory;
    private Arena arena;
    private MemorySegment source;
    private MemorySegment target;

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        scattered = LocalBandwidthBenchmark.scattered(layout);
        directory = Files.createTempDirectory(Path.of("/dev/shm"), "xferd-perf-memcpy-");
        arena = Arena.ofShared();
        final long length = (long)LocalBandwidthBenchmark.BATCH * blockSize;
        source = map(directory.resolve("source"), length);
        target = map(directory.resolve("target"), length);
        source.fill((byte)7);
        target.fill((byte)0);
    }

    private MemorySegment map(final Path file, final long length) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            channel.truncate(length);
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (arena != null)
        {
            arena.close();
        }
        InProcessDaemon.deleteRecursively(directory);
    }

    @Benchmark
    public int copyBatch()
    {
        final MemorySegment from = source;
        final MemorySegment to = target;
        final long block = blockSize;
        for (int i = 0; i < LocalBandwidthBenchmark.BATCH; i++)
        {
            MemorySegment.copy(from, i * block, to, LocalBandwidthBenchmark.targetBlock(i, scattered) * block, block);
        }
        return LocalBandwidthBenchmark.BATCH;
    }
}
