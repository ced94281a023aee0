package io.xferd.daemon.tools.bench;

import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The throughput mode of {@code xferd bench}: N threads, each with its own client (its own segment, its own
 * local buffer, its own range of the target), all warm up together, then run for the same time; prints the
 * total GB/s and requests/s and the merged per-request latency percentiles.
 */
public final class ThroughputBench
{
    /** Most of the target one thread cycles over (and the size of its local buffer). */
    public static final long MAX_SPAN = 64L * 1024 * 1024;

    private final BenchClients clients;
    private final int opcode;
    private final long blockSize;
    private final int batchSize;
    private final int window;
    private boolean randomOrder;
    private final PrintStream out;

    /**
     * Visit the target's blocks in a seeded random order (as fio's randread), not one after the other.
     */
    public ThroughputBench randomOrder(final boolean value)
    {
        this.randomOrder = value;
        return this;
    }

    public ThroughputBench(final BenchClients clients, final int opcode, final long blockSize, final int batchSize,
        final int window, final PrintStream out)
    {
        this.clients = clients;
        this.opcode = opcode;
        this.blockSize = blockSize;
        this.batchSize = batchSize;
        this.window = window;
        this.out = out;
    }

    /**
     * @return the bytes of the target that {@code threads} threads use: each cycles over at most {@link #MAX_SPAN}.
     */
    public static long spanPerThread(final long targetSize, final int threads, final long blockSize)
    {
        final long range = targetSize / threads / blockSize * blockSize;
        return Math.min(range, Math.max(blockSize, MAX_SPAN / blockSize * blockSize));
    }

    /**
     * Run the warm-up and the timed phase, print the results, verify when asked.
     *
     * @return 0 when every request completed (and every verified byte matched), else 1.
     */
    public int run(final int threads, final Duration warmup, final Duration duration, final boolean verify,
        final long seed, final LatencyReport log) throws InterruptedException
    {
        final long span = spanPerThread(clients.targetSize(), threads, blockSize);
        if (span < blockSize)
        {
            throw new IllegalArgumentException("the target (" + clients.targetSize() + " bytes) is too small for " +
                threads + " thread(s) of " + blockSize + "-byte blocks");
        }
        final List<ThroughputWorker> workers = new ArrayList<>();
        final List<SharedBuffer> spares = new ArrayList<>();
        for (int i = 0; i < threads; i++)
        {
            final XferClient client = clients.connect(i);
            final SharedBuffer local = clients.allocate(client, span);
            spares.add(verify && opcode == Opcode.WRITE ? clients.allocate(client, span) : null);
            final ThroughputWorker worker = new ThroughputWorker(client, clients.openTarget(client), opcode, local,
                clients.targetAddress(), i * span, span, blockSize, batchSize, window);
            workers.add(randomOrder ? worker.randomOrder(seed + i) : worker);
        }
        out.printf(Locale.ROOT, "bench: %s, %s blocks, batches of %d, %d in flight per thread, %d thread(s) over " +
            "%s each, %.1f s after %.1f s warm-up, target %s%n", Opcode.name(opcode).toLowerCase(Locale.ROOT),
            Units.formatBytes(blockSize), batchSize, window, threads, Units.formatBytes(span),
            duration.toNanos() / 1e9, warmup.toNanos() / 1e9, clients.targetName());
        out.flush();

        runThreads(workers, warmup, duration);

        final Histogram merged = LatencyReport.newHistogram();
        long requests = 0;
        long failed = 0;
        long elapsed = 1;
        for (final ThroughputWorker worker : workers)
        {
            merged.add(worker.latency());
            requests += worker.requests();
            failed += worker.failed();
            elapsed = Math.max(elapsed, worker.elapsedNanos());
            if (worker.failed() > 0)
            {
                out.println("bench: FAILED requests: " + worker.failed() + " on " + worker.client().segmentName() +
                    ", first with status " + TransferStatus.name(worker.firstFailureStatus()));
            }
        }
        final double seconds = elapsed / 1e9;
        final long bytes = requests * blockSize;
        final String op = Opcode.name(opcode).toLowerCase(Locale.ROOT);
        out.printf(Locale.ROOT, "%s: %.3f GB/s, %.0f requests/s (%d requests of %s, %.3f GB in %.2f s, %d thread(s))%n",
            op, bytes / seconds / 1e9, requests / seconds, requests, Units.formatBytes(blockSize), bytes / 1e9,
            seconds, threads);
        out.println("latency per request (submit->completion), us: " + LatencyReport.percentiles(merged, 1e3));
        out.printf(Locale.ROOT, "RESULT mode=throughput operation=%s block_size=%d batch_size=%d window=%d threads=%d " +
            "seconds=%.3f bytes=%d requests=%d failed=%d gb_per_s=%.4f requests_per_s=%.1f %s%n",
            op, blockSize, batchSize, window, threads, seconds, bytes, requests, failed, bytes / seconds / 1e9,
            requests / seconds, LatencyReport.percentileFields(merged, "us", 1e3));
        log.add(op + "-" + blockSize + "-t" + threads, merged);

        int mismatches = 0;
        if (verify && failed == 0)
        {
            for (int i = 0; i < workers.size(); i++)
            {
                final String problem = workers.get(i).verify(seed, spares.get(i));
                if (problem != null)
                {
                    mismatches++;
                    out.println("verify: FAILED (thread " + i + "): " + problem);
                }
            }
            if (mismatches == 0)
            {
                out.println("verify: OK, " + Units.formatBytes(span * threads) + " " +
                    (opcode == Opcode.WRITE ? "written, read back" : "read") + " and compared with the pattern");
            }
        }
        out.flush();
        return failed == 0 && mismatches == 0 ? 0 : 1;
    }

    private static void runThreads(final List<ThroughputWorker> workers, final Duration warmup,
        final Duration duration) throws InterruptedException
    {
        final CyclicBarrier barrier = new CyclicBarrier(workers.size());
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final List<Thread> threads = new ArrayList<>();
        final long barrierTimeoutMs = warmup.toMillis() + duration.toMillis() + 60_000;
        for (int i = 0; i < workers.size(); i++)
        {
            final ThroughputWorker worker = workers.get(i);
            threads.add(Thread.ofPlatform().name("bench-" + i).start(() ->
            {
                try
                {
                    if (!warmup.isZero())
                    {
                        worker.run(warmup.toNanos());
                        worker.reset();
                    }
                    barrier.await(barrierTimeoutMs, TimeUnit.MILLISECONDS);
                    worker.run(duration.toNanos());
                }
                catch (final InterruptedException | BrokenBarrierException | TimeoutException ex)
                {
                    error.compareAndSet(null, ex);
                }
                catch (final RuntimeException ex)
                {
                    error.compareAndSet(null, ex);
                    barrier.reset(); // the others waiting for this thread give up
                }
            }));
        }
        for (final Thread thread : threads)
        {
            thread.join();
        }
        if (error.get() != null)
        {
            throw new IllegalStateException("a bench thread failed: " + error.get(), error.get());
        }
    }
}
