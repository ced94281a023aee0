package io.xferd.perf;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Who allocated how much between two snapshots, per live thread of this JVM (HotSpot's per-thread allocated
 * bytes, the same source as JMH's {@code -prof gc}, but not summed). On with {@code -Dxferd.perf.threadAlloc=true};
 * the benchmarks print it after each iteration, so a non-zero gc.alloc.rate.norm can be pinned to the client
 * (the JMH worker thread), the daemon's data plane or its conductor.
 */
final class ThreadAllocations
{
    static final boolean ENABLED = Boolean.getBoolean("xferd.perf.threadAlloc");

    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
    private final Map<Long, Long> before = new HashMap<>();
    private long startNanos;

    void start()
    {
        before.clear();
        final long[] ids = threads.getAllThreadIds();
        final long[] bytes = threads.getThreadAllocatedBytes(ids);
        for (int i = 0; i < ids.length; i++)
        {
            before.put(ids[i], bytes[i]);
        }
        // this thread's own bookkeeping above is not the benchmark's
        before.put(Thread.currentThread().threadId(), threads.getCurrentThreadAllocatedBytes());
        startNanos = System.nanoTime();
    }

    /**
     * @param operations operations done since {@link #start()} (for bytes per op), or 0 if unknown.
     */
    void report(final String label, final long operations)
    {
        final long ownNow = threads.getCurrentThreadAllocatedBytes();
        final double seconds = (System.nanoTime() - startNanos) / 1e9;
        final long[] ids = threads.getAllThreadIds();
        final long[] bytes = threads.getThreadAllocatedBytes(ids);
        final Map<String, Long> deltas = new TreeMap<>();
        for (int i = 0; i < ids.length; i++)
        {
            final long id = ids[i];
            final long now = id == Thread.currentThread().threadId() ? ownNow : bytes[i];
            final Long then = before.get(id);
            final java.lang.management.ThreadInfo info = threads.getThreadInfo(id);
            if (now > 0 && then != null && now > then && info != null)
            {
                deltas.put(info.getThreadName(), now - then);
            }
        }
        final StringBuilder line = new StringBuilder();
        line.append(String.format("%n[thread-alloc] %s: %,d ops in %.2f s%n", label, operations, seconds));
        deltas.forEach((name, allocated) -> line.append(String.format(
            "[thread-alloc]   %-60s %,12d B  %,10.0f B/s  %.4f B/op%n",
            name, allocated, allocated / seconds, operations > 0 ? (double)allocated / operations : Double.NaN)));
        if (deltas.isEmpty())
        {
            line.append("[thread-alloc]   no thread allocated anything\n");
        }
        System.out.print(line);
    }
}
