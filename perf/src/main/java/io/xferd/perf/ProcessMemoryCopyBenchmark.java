package io.xferd.perf;

import io.xferd.daemon.memory.ProcessMemory;
import io.xferd.nativebindings.libc.MappedMemory;
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

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * What a client's ordinary (process) memory costs against shared memory, per copy of {@link #blockSize} bytes, one
 * thread: {@code memcpy} is the daemon's copy between two mappings (memfd regions, the baseline); {@code write} and
 * {@code read} are one process_vm_writev / process_vm_readv between a mapping and process memory (what a local
 * transfer between a memfd region and a process region costs, and a TCP slice through the staging buffer);
 * {@code bounce} is process memory to process memory through a bounce buffer (read then write). The "other process"
 * is this one (same kernel path: the target's pages are looked up and copied by the kernel); its memory is private
 * anonymous memory, pre-touched, as a numpy array's is.
 */
@State(Scope.Benchmark)
@Threads(1)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ProcessMemoryCopyBenchmark extends ForkedWithXferdFlags
{
    @Param({"65536", "1048576"})
    public int blockSize;

    private static final int BLOCKS = 16;
    private final int pid = (int)ProcessHandle.current().pid();
    private MemorySegment mapping;
    private MemorySegment process;
    private MemorySegment bounce;

    @Setup(Level.Trial)
    public void setUp()
    {
        mapping = MappedMemory.mapAnonymous((long)BLOCKS * blockSize);
        process = MappedMemory.mapAnonymous((long)BLOCKS * blockSize);
        bounce = MappedMemory.mapAnonymous(blockSize);
        mapping.fill((byte)7);
        process.fill((byte)1);
        bounce.fill((byte)0);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        MappedMemory.unmap(mapping);
        MappedMemory.unmap(process);
        MappedMemory.unmap(bounce);
    }

    @Benchmark
    public int memcpy()
    {
        for (int i = 0; i < BLOCKS; i++)
        {
            MemorySegment.copy(mapping, (long)i * blockSize, process, (long)i * blockSize, blockSize);
        }
        return BLOCKS;
    }

    @Benchmark
    public int write()
    {
        int failures = 0;
        for (int i = 0; i < BLOCKS; i++)
        {
            failures += ProcessMemory.write(pid, process.address() + (long)i * blockSize,
                mapping.address() + (long)i * blockSize, blockSize);
        }
        return check(failures);
    }

    @Benchmark
    public int read()
    {
        int failures = 0;
        for (int i = 0; i < BLOCKS; i++)
        {
            failures += ProcessMemory.read(pid, process.address() + (long)i * blockSize,
                mapping.address() + (long)i * blockSize, blockSize);
        }
        return check(failures);
    }

    @Benchmark
    public int bounce()
    {
        int failures = 0;
        for (int i = 0; i < BLOCKS; i++)
        {
            failures += ProcessMemory.read(pid, process.address() + (long)i * blockSize, bounce.address(), blockSize);
            failures += ProcessMemory.write(pid, mapping.address() + (long)i * blockSize, bounce.address(), blockSize);
        }
        return check(failures);
    }

    private static int check(final int failures)
    {
        if (failures != 0)
        {
            throw new IllegalStateException("process_vm copy failed: errno sum " + failures);
        }
        return BLOCKS;
    }
}
