package io.xferd.daemon.tools.bench;

import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;

/**
 * Two prompts of different sizes from two clients (two inference workers of one host, one daemon, one wire), the
 * second arriving a fixed delay after the first started, in both orders: does a short prompt that arrives behind a
 * long one wait for it, and what does a long one pay for arriving behind a short one? Each size is also timed alone
 * in the same run, and how many bytes of the first prompt crossed while the second was under way (what the second
 * waited behind, whatever the wire's speed). Rounds do not overlap each other: the next starts once both prompts of
 * the last completed.
 */
public final class KvOverlap
{
    private final KvWorkload first;
    private final KvWorkload second;
    private final String operation;
    private final PrintStream out;

    /**
     * @param first  the workload of the client whose prompt starts each round.
     * @param second the workload of the client whose prompt arrives the delay later.
     */
    public KvOverlap(final KvWorkload first, final KvWorkload second, final String operation, final PrintStream out)
    {
        this.first = first;
        this.second = second;
        this.operation = operation;
        this.out = out;
    }

    /**
     * @param orders each {first tokens, second tokens}.
     * @return the number of prompts that failed.
     */
    public long run(final List<int[]> orders, final int rounds, final Duration delay, final LatencyReport log)
    {
        long failures = 0;
        final ExecutorService arriving = Executors.newSingleThreadExecutor(runnable ->
            Thread.ofPlatform().daemon().name("kv-second-client").unstarted(runnable));
        try
        {
            for (final int tokens : sizes(orders))
            {
                final Histogram alone = LatencyReport.newHistogram();
                for (int round = 0; round < rounds; round++)
                {
                    failures += record(alone, first.transferOnce(tokens));
                }
                print("alone", tokens, tokens, "alone", alone);
                log.add("kv-alone-" + tokens, alone);
            }
            for (final int[] order : orders)
            {
                final Histogram firstTimes = LatencyReport.newHistogram();
                final Histogram secondTimes = LatencyReport.newHistogram();
                // per round, the first prompt's bytes that completed while the second was under way: what the second
                // waited behind (the wire's speed does not enter, the order the daemons chose does); exact, few rounds
                final long[] firstDuringSecond = new long[rounds];
                for (int round = 0; round < rounds; round++)
                {
                    final long start = System.nanoTime();
                    final Future<Long> late = arriving.submit(() ->
                    {
                        final long at = start + delay.toNanos();
                        long wait;
                        while ((wait = at - System.nanoTime()) > 0)
                        {
                            LockSupport.parkNanos(Math.min(wait, 50_000));
                        }
                        return second.transferOnce(order[1]);
                    });
                    failures += record(firstTimes, first.transferOnce(order[0]));
                    failures += record(secondTimes, await(late));
                    firstDuringSecond[round] = first.bytesCompletedWithin(second.lastFirstSubmitNanos(),
                        second.lastCompletedNanos());
                }
                final String label = order[0] + ":" + order[1];
                print(label, order[0], order[1], "first", firstTimes);
                print(label, order[1], order[0], "second", secondTimes);
                out.printf(Locale.ROOT, "RESULT mode=kv-overlap-share operation=%s order=%s tokens=%d other_tokens=%d " +
                    "role=second other_bytes_during_p50=%d other_bytes_during_max=%d%n", operation, label, order[1],
                    order[0], median(firstDuringSecond), java.util.Arrays.stream(firstDuringSecond).max().orElse(0));
                log.add("kv-overlap-" + order[0] + "-" + order[1] + "-first", firstTimes);
                log.add("kv-overlap-" + order[0] + "-" + order[1] + "-second", secondTimes);
            }
        }
        finally
        {
            arriving.shutdownNow();
        }
        out.printf(Locale.ROOT, "kv overlap: the second prompt arrived %.1f ms after the first started; %d rounds " +
            "per order%n", delay.toNanos() / 1e6, rounds);
        return failures;
    }

    private void print(final String order, final int tokens, final int otherTokens, final String role,
        final Histogram times)
    {
        out.printf(Locale.ROOT, "RESULT mode=kv-overlap operation=%s order=%s tokens=%d other_tokens=%d role=%s " +
            "bytes=%d %s%n", operation, order, tokens, otherTokens, role, KvWorkload.localBytes(tokens),
            LatencyReport.percentileFields(times, "ms", 1e6));
        out.flush();
    }

    private static long median(final long[] values)
    {
        final long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted.length == 0 ? 0 : sorted[(sorted.length - 1) / 2];
    }

    private static int record(final Histogram times, final long nanos)
    {
        if (nanos < 0)
        {
            return 1;
        }
        times.recordValue(Math.min(LatencyReport.HIGHEST_NANOS, nanos));
        return 0;
    }

    private static long await(final Future<Long> late)
    {
        try
        {
            return late.get();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
        catch (final ExecutionException ex)
        {
            throw new IllegalStateException("the second client failed: " + ex.getCause(), ex.getCause());
        }
    }

    private static int[] sizes(final List<int[]> orders)
    {
        return orders.stream().flatMapToInt(java.util.Arrays::stream).distinct().sorted().toArray();
    }
}
