package io.xferd.perf;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferBatch;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
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

import java.util.concurrent.TimeUnit;

/**
 * Local transfer bandwidth: one operation is a batch of {@link #BATCH} WRITE requests of {@link #blockSize} bytes
 * each, from the producer client's registered memfd to the consumer client's (another segment, opened by name),
 * submitted ({@link #api}: as 32 requests or as one batch record), then awaited by spinning on the completion ring.
 * Sample mode: the time of each sampled batch, so the summary can take the median batch (GB/s =
 * {@code BATCH * blockSize / p50}) as well as the mean. On a shared 2-vCPU VM a batch the scheduler descheduled takes
 * milliseconds instead of microseconds: a few of those move the mean (and throughput mode's score) by half, the
 * median hardly (run-benchmarks.sh prints both, and the spread of the iterations' medians).
 * {@link MemcpyBaselineBenchmark} copies the same bytes with the same granularity between two mapped /dev/shm
 * files: the one-copy floor.
 * <p>
 * Memory: 2 x BATCH x blockSize (1 GiB at 16 MiB blocks), all of it in /dev/shm (memfd), none on the heap.
 */
@State(Scope.Benchmark)
@Threads(1)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LocalBandwidthBenchmark extends ForkedWithXferdFlags
{
    public static final int BATCH = 32;

    @Param({"4096", "65536", "1048576", "16777216"})
    public int blockSize;

    /**
     * The daemon's data-plane idle strategy (DaemonContext names).
     */
    @Param({"backoff"})
    public String idle;

    /**
     * The daemon's transfer journal: "on" (the daemon's default) or "off" (--no-journal), to measure its cost.
     */
    @Param({"on"})
    public String journal;

    /**
     * How the producer waits for the batch: "spin" on {@code pendingTasks} (default), or "await" with the blocking
     * {@code awaitBatch} (the client's backoff idle strategy: spin, yield, then park), which leaves the daemon's
     * copying thread the CPU to itself on a small host.
     */
    @Param({"spin"})
    public String wait;

    /**
     * How the 32 WRITEs go: "requests", one SUBMIT record and one completion each (Mooncake's
     * {@code submitTransfer} per request: 32 tasks), or "batch", one SUBMIT_BATCH record of 32 entries answered by
     * one completion ({@code submitBatch}: one task; one intake record and one completion for the 32).
     */
    @Param({"requests"})
    public String api;

    /**
     * Where block i lands: "adjacent", at block i of the target (consecutive requests follow each other in both
     * memories, so the daemon checks and copies them as one span), or "scattered", at block BATCH-1-i (a paged KV
     * cache's blocks rarely follow each other on both sides: every request is checked and copied on its own).
     */
    @Param({"adjacent"})
    public String layout;

    private InProcessDaemon daemon;
    private XferClient producer;
    private XferClient consumer;
    private SharedBuffer source;
    private SharedBuffer target;
    private long targetSegment;
    private final TransferRequest request = new TransferRequest();
    private final TransferBatch transfers = new TransferBatch(BATCH);
    private boolean awaitBatch;
    private boolean oneRecord;
    private boolean scattered;

    @Setup(Level.Trial)
    public void setUp()
    {
        if (!"spin".equals(wait) && !"await".equals(wait))
        {
            throw new IllegalArgumentException("wait must be spin or await: " + wait);
        }
        awaitBatch = "await".equals(wait);
        if (!"requests".equals(api) && !"batch".equals(api))
        {
            throw new IllegalArgumentException("api must be requests or batch: " + api);
        }
        oneRecord = "batch".equals(api);
        scattered = LocalBandwidthBenchmark.scattered(layout);
        daemon = new InProcessDaemon(idle, journal);
        producer = daemon.connect("perf-bw-producer");
        consumer = daemon.connect("perf-bw-consumer");
        final long length = (long)BATCH * blockSize;
        source = producer.allocateMemory(length);
        target = consumer.allocateMemory(length);
        source.segment().fill((byte)7); // fault the pages in before measuring
        target.segment().fill((byte)0);
        producer.registerMemory(source, "cpu:0");
        consumer.registerMemory(target, "cpu:0");
        targetSegment = producer.openSegment("perf-bw-consumer");

        writeBatch();
        if (target.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, length - 1) != 7)
        {
            throw new IllegalStateException("the batch did not land in the consumer's memory");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (producer != null)
        {
            producer.close();
        }
        if (consumer != null)
        {
            consumer.close();
        }
        if (daemon != null)
        {
            daemon.close();
        }
    }

    @Benchmark
    public int writeBatch()
    {
        final XferClient client = producer;
        final int tasks = oneRecord ? 1 : BATCH;
        final long batch = client.allocateBatch(tasks);
        final long from = source.address();
        final long to = target.address();
        final long block = blockSize;
        if (oneRecord)
        {
            transfers.reset(Opcode.WRITE, targetSegment);
            for (int i = 0; i < BATCH; i++)
            {
                transfers.add(from + i * block, to + targetBlock(i, scattered) * block, block);
            }
            client.submitBatch(batch, transfers);
        }
        else
        {
            for (int i = 0; i < BATCH; i++)
            {
                client.submitTransfer(batch, request.set(Opcode.WRITE, from + i * block, targetSegment,
                    to + targetBlock(i, scattered) * block, block));
            }
        }
        if (awaitBatch)
        {
            client.awaitBatch(batch, 10_000);
        }
        else
        {
            while (client.pendingTasks(batch) > 0)
            {
                Thread.onSpinWait();
            }
        }
        for (int i = 0; i < tasks; i++)
        {
            if (client.taskState(batch, i) != TaskStatus.COMPLETED)
            {
                throw new IllegalStateException("task " + i + " of the batch failed");
            }
        }
        client.freeBatch(batch);
        return BATCH;
    }

    static boolean scattered(final String layout)
    {
        if (!"adjacent".equals(layout) && !"scattered".equals(layout))
        {
            throw new IllegalArgumentException("layout must be adjacent or scattered: " + layout);
        }
        return "scattered".equals(layout);
    }

    /** The target block of source block {@code i}: the same, or mirrored so no two neighbours stay neighbours. */
    static long targetBlock(final int i, final boolean scattered)
    {
        return scattered ? BATCH - 1 - i : i;
    }
}
