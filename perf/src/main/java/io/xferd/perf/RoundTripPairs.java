package io.xferd.perf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The 64 B round trip and both raw-ring floors measured in ONE process, window by window in rotation, each window
 * also measuring how fast a cache line crosses between the two vCPUs at that moment.
 * <p>
 * Why: on this 2-vCPU KVM guest the cost of moving a cache line from one vCPU to the other is bimodal and set by
 * the host, not by the guest: a bare C ping-pong of one line between threads pinned to vCPU 0 and 1 takes either
 * ~85-110 ns or ~345-420 ns per round trip, and switches between the two every few seconds, across sleeps as well
 * as while both threads spin (the host placing the two vCPU threads on cores that share a cache or not). The raw
 * ring's 0.28 / 0.70 us fork modes and xferd's 0.61 / 1.1-1.3 us are these two placements; JMH runs the round trip's
 * forks and the raw ring's forks minutes apart, so a per-fork ratio compared a fast-mode fork with a slow-mode one
 * (round seven's 4.23x and 0.90x). Here every window of xferd sits between windows of the raw rings in the same JVM,
 * so the ratio of a window to its neighbours compares like with like; the line probe says which placement it was
 * (above {@value #PREEMPTED_LINE_NS} ns it was preempted, on a loaded box: counted in "all windows" only).
 * <p>
 * Each operation is the benchmarks' own ({@link RoundTripBenchmark#roundTrip()},
 * {@link RawRingPingPongBenchmark#pingPong()}, same idle strategy for the answering threads), timed one by one with
 * {@link System#nanoTime()} as JMH's SampleTime does. Not a JMH benchmark: JMH measures one method per fork.
 * <p>
 * Usage: {@code RoundTripPairs [--windows N] [--window-ms MS] [--warm-up-s S] [--idle backoff|busy-spin]
 * [--journal on|off]}; run one JVM per fork ({@code perf/roundtrip-pairs.sh --forks 3}).
 */
public final class RoundTripPairs
{
    private static final int FAST_LINE_NS = 200;
    /** A line probe this slow was preempted (a loaded box): its window's placement is unknown. */
    private static final int PREEMPTED_LINE_NS = 1_000;
    private static final int SETTLE_NS = 2_000_000;
    private static final int MAX_SAMPLES = 1 << 21;

    private final long[] samples = new long[MAX_SAMPLES];
    private final long windowNs;

    private RoundTripPairs(final long windowNs)
    {
        this.windowNs = windowNs;
    }

    /** What one window measured: the p50 and p99 of its operations, in ns. */
    private record Window(long p50, long p99, int count)
    {
    }

    private interface Operation
    {
        void run();
    }

    public static void main(final String[] args) throws Exception
    {
        int windows = 30;
        long windowMs = 100;
        long warmUpS = 6;
        String idle = "backoff";
        String journal = "on";
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--windows" -> windows = Integer.parseInt(args[++i]);
                case "--window-ms" -> windowMs = Long.parseLong(args[++i]);
                case "--warm-up-s" -> warmUpS = Long.parseLong(args[++i]);
                case "--idle" -> idle = args[++i];
                case "--journal" -> journal = args[++i];
                default -> throw new IllegalArgumentException("unknown option: " + args[i]);
            }
        }
        final RoundTripBenchmark xferd = new RoundTripBenchmark();
        xferd.idle = idle;
        xferd.journal = journal;
        final RawRingPingPongBenchmark manyToOne = rawRing(idle, "many-to-one");
        final RawRingPingPongBenchmark oneToOne = rawRing(idle, "one-to-one");
        // every set-up inside the try: the in-process daemon's threads are not daemon threads, so a set-up that
        // throws after launching it (a 64-byte transfer that did not complete) must still close it, or the JVM and
        // perf/roundtrip-pairs.sh never end
        boolean manyToOneUp = false;
        boolean oneToOneUp = false;
        try
        {
            xferd.setUp();
            xferd.startIteration();
            manyToOne.setUp();
            manyToOneUp = true;
            oneToOne.setUp();
            oneToOneUp = true;
            new RoundTripPairs(windowMs * 1_000_000L).run(windows, warmUpS, xferd, manyToOne, oneToOne);
        }
        finally
        {
            try
            {
                xferd.tearDown(); // closes what a partial set-up opened
            }
            finally
            {
                if (manyToOneUp)
                {
                    manyToOne.tearDown();
                }
                if (oneToOneUp)
                {
                    oneToOne.tearDown();
                }
            }
        }
    }

    private static RawRingPingPongBenchmark rawRing(final String idle, final String completionRing)
    {
        final RawRingPingPongBenchmark ring = new RawRingPingPongBenchmark();
        ring.idle = idle;
        ring.completionRing = completionRing;
        return ring;
    }

    private void run(
        final int windows,
        final long warmUpS,
        final RoundTripBenchmark xferd,
        final RawRingPingPongBenchmark manyToOne,
        final RawRingPingPongBenchmark oneToOne) throws InterruptedException
    {
        final Operation[] operations = {xferd::roundTrip, manyToOne::pingPong, oneToOne::pingPong};
        final long warmUpEnd = System.nanoTime() + warmUpS * 1_000_000_000L;
        while (System.nanoTime() < warmUpEnd)
        {
            for (final Operation operation : operations)
            {
                measure(operation);
            }
            // the probe too: a cold one (interpreted, its echo thread's first run) reads slow and would put the first
            // window in the slow-line group
            lineRoundTripNs();
        }
        System.out.printf("window  xferd_p50  m2o_p50  o2o_p50  xferd/m2o  xferd/o2o  xferd_p99  line_ns  vCPUs%n");
        final List<long[]> rows = new ArrayList<>();
        for (int w = 0; w < windows; w++)
        {
            // rotate the order so that no floor always follows xferd (a window's first ms wakes its responder)
            final Window[] measured = new Window[3];
            for (int k = 0; k < 3; k++)
            {
                final int which = (w + k) % 3;
                measured[which] = measure(operations[which]);
            }
            final long lineNs = lineRoundTripNs();
            final String cpus = vcpus();
            final Window x = measured[0];
            final Window m = measured[1];
            final Window o = measured[2];
            System.out.printf("%6d %10.3f %8.3f %8.3f %10.2f %10.2f %10.2f %8d  %s%n", w, x.p50 / 1e3, m.p50 / 1e3,
                o.p50 / 1e3, (double)x.p50 / m.p50, (double)x.p50 / o.p50, x.p99 / 1e3, lineNs, cpus);
            rows.add(new long[]{x.p50, m.p50, o.p50, x.p99, lineNs});
        }
        summarize("all windows", rows);
        summarize("fast line (< " + FAST_LINE_NS + " ns)", rows.stream().filter(r -> r[4] < FAST_LINE_NS).toList());
        summarize("slow line (< " + PREEMPTED_LINE_NS + " ns)",
            rows.stream().filter(r -> r[4] >= FAST_LINE_NS && r[4] < PREEMPTED_LINE_NS).toList());
    }

    private static void summarize(final String title, final List<long[]> rows)
    {
        if (rows.isEmpty())
        {
            System.out.printf("SUMMARY %-24s windows 0%n", title);
            return;
        }
        System.out.printf("SUMMARY %-24s windows %d: xferd p50 %.3f us, many-to-one %.3f, one-to-one %.3f; " +
            "median window ratio %.2fx many-to-one, %.2fx one-to-one; xferd p99 median %.2f us, max %.2f us%n",
            title, rows.size(), median(rows, r -> r[0]) / 1e3, median(rows, r -> r[1]) / 1e3,
            median(rows, r -> r[2]) / 1e3, median(rows, r -> r[0] * 1e3 / r[1]) / 1e3,
            median(rows, r -> r[0] * 1e3 / r[2]) / 1e3, median(rows, r -> r[3]) / 1e3,
            rows.stream().mapToLong(r -> r[3]).max().orElse(0) / 1e3);
    }

    private static double median(final List<long[]> rows, final java.util.function.ToDoubleFunction<long[]> f)
    {
        final double[] values = rows.stream().mapToDouble(f).sorted().toArray();
        final int n = values.length;
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    }

    /**
     * Run the operation for one window, the first {@link #SETTLE_NS} unrecorded (its answering thread may have
     * backed off to a park while the others ran).
     */
    private Window measure(final Operation operation)
    {
        final long settleEnd = System.nanoTime() + SETTLE_NS;
        while (System.nanoTime() < settleEnd)
        {
            operation.run();
        }
        final long end = System.nanoTime() + windowNs;
        int n = 0;
        long now = System.nanoTime();
        while (now < end && n < MAX_SAMPLES)
        {
            operation.run();
            final long after = System.nanoTime();
            samples[n++] = after - now;
            now = after;
        }
        Arrays.sort(samples, 0, n);
        return new Window(samples[n / 2], samples[(int)(n * 0.99)], n);
    }

    /**
     * The best mean of 1,000 cache-line round trips between this thread and a fresh one over ~5 ms: on a quiet box
     * the two run on the two vCPUs, so this is the placement the window just had.
     */
    private static long lineRoundTripNs() throws InterruptedException
    {
        final AtomicLongArray line = new AtomicLongArray(64); // ping at [0], pong at [32]: 256 bytes apart
        final Thread echo = new Thread(() ->
        {
            long last = 0;
            while (last >= 0)
            {
                final long v = line.getAcquire(0);
                if (v != last)
                {
                    last = v;
                    line.setRelease(32, v);
                }
                else
                {
                    Thread.onSpinWait();
                }
            }
        }, "line-probe");
        echo.setDaemon(true);
        echo.start();
        long best = Long.MAX_VALUE;
        long seq = 0;
        final long end = System.nanoTime() + 5_000_000;
        while (System.nanoTime() < end)
        {
            final long start = System.nanoTime();
            for (int i = 0; i < 1_000; i++)
            {
                line.setRelease(0, ++seq);
                while (line.getAcquire(32) != seq)
                {
                    Thread.onSpinWait();
                }
            }
            best = Math.min(best, (System.nanoTime() - start) / 1_000);
        }
        line.setRelease(0, -1);
        echo.join(1_000);
        return best;
    }

    /**
     * The vCPU each thread of the round trips last ran on (/proc/self/task/TID/stat, field 39): this thread "main",
     * the daemon's data-plane thread(s) and the raw responders.
     */
    private static String vcpus()
    {
        final StringBuilder out = new StringBuilder();
        try (var tasks = Files.list(Path.of("/proc/self/task")))
        {
            final String self = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
            for (final Path task : tasks.toList())
            {
                final String stat;
                try
                {
                    stat = Files.readString(task.resolve("stat"));
                }
                catch (final IOException gone)
                {
                    continue;
                }
                final String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                final boolean me = task.getFileName().toString().equals(self);
                // SHARED threading: one thread runs the composite "[xferd-intake,xferd-transfer-0,...]"
                final String name = me ? "main" : comm.startsWith("[xferd-intake") ? "data-plane" :
                    comm.startsWith("raw-ring") ? "raw" : null;
                if (name != null)
                {
                    final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    out.append(name).append('=').append(fields[36]).append(' ');
                }
            }
        }
        catch (final IOException ex)
        {
            return "?";
        }
        return out.toString().trim();
    }
}
