package io.xferd.daemon.tools.bench;

import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * The prompts of one KV phase, each with when it arrived, was first submitted and last completed, and what overlapped
 * what: a prompt's transfer time is only the daemon's doing when no other prompt of the client was on the wire
 * beside it; one that overlapped another shared the wire, and its time is set by the arrivals as much as by the
 * daemon. Records without allocating; the questions are asked after the phase.
 */
final class KvPromptLog
{
    private final int[] ordinal;
    private final long[] arrival;
    private final long[] firstSubmit;
    private final long[] end;
    private final long[] traceId;
    private final long[] lastSubmit;
    private int count;

    KvPromptLog(final int capacity)
    {
        ordinal = new int[capacity];
        arrival = new long[capacity];
        firstSubmit = new long[capacity];
        end = new long[capacity];
        traceId = new long[capacity];
        lastSubmit = new long[capacity];
    }

    void clear()
    {
        count = 0;
    }

    /**
     * @param ordinal the prompt's place among the phase's arrivals, from 1.
     * @param traceId its requests' trace id (the daemon's journal has them: {@code xferd profile --trace}).
     * @param lastSubmit when its last request was submitted: a client that waits for room in its ring or for its
     *                   in-flight limit spreads the submission, and the journal's latencies do not show that wait.
     */
    void record(final int ordinal, final long traceId, final long arrival, final long firstSubmit,
        final long lastSubmit, final long end)
    {
        if (count == this.ordinal.length)
        {
            return;
        }
        this.ordinal[count] = ordinal;
        this.arrival[count] = arrival;
        this.firstSubmit[count] = firstSubmit;
        this.end[count] = end;
        this.traceId[count] = traceId;
        this.lastSubmit[count] = lastSubmit;
        count++;
    }

    int count()
    {
        return count;
    }

    int ordinal(final int prompt)
    {
        return ordinal[prompt];
    }

    long traceId(final int prompt)
    {
        return traceId[prompt];
    }

    /**
     * @return first to last submit of the prompt's requests.
     */
    long submitSpanNanos(final int prompt)
    {
        return lastSubmit[prompt] - firstSubmit[prompt];
    }

    long transferNanos(final int prompt)
    {
        return end[prompt] - firstSubmit[prompt];
    }

    long queueNanos(final int prompt)
    {
        return Math.max(0, firstSubmit[prompt] - arrival[prompt]);
    }

    /**
     * @return how many other prompts were in flight (first submit to last completion) at some moment of this one's.
     */
    int others(final int prompt)
    {
        int others = 0;
        for (int other = 0; other < count; other++)
        {
            others += other != prompt && intersection(prompt, other) > 0 ? 1 : 0;
        }
        return others;
    }

    /**
     * @return nanoseconds of this prompt's transfer during which at least one other prompt was in flight.
     */
    long overlappedNanos(final int prompt)
    {
        final long[][] spans = new long[count][];
        int n = 0;
        for (int other = 0; other < count; other++)
        {
            if (other != prompt && intersection(prompt, other) > 0)
            {
                spans[n++] = new long[] {Math.max(firstSubmit[prompt], firstSubmit[other]),
                    Math.min(end[prompt], end[other])};
            }
        }
        Arrays.sort(spans, 0, n, (a, b) -> Long.compare(a[0], b[0]));
        long covered = 0;
        long from = Long.MIN_VALUE;
        long to = Long.MIN_VALUE;
        for (int i = 0; i < n; i++)
        {
            if (spans[i][0] > to)
            {
                covered += to - from;
                from = spans[i][0];
                to = spans[i][1];
            }
            else
            {
                to = Math.max(to, spans[i][1]);
            }
        }
        return covered + (to - from);
    }

    boolean alone(final int prompt)
    {
        return others(prompt) == 0;
    }

    /**
     * @return the transfer times of the prompts that ran alone ({@code alone}) or overlapped another (not).
     */
    Histogram transferTimes(final boolean alone)
    {
        final Histogram times = LatencyReport.newHistogram();
        for (int prompt = 0; prompt < count; prompt++)
        {
            if (alone(prompt) == alone)
            {
                times.recordValue(Math.min(LatencyReport.HIGHEST_NANOS, Math.max(0, transferNanos(prompt))));
            }
        }
        return times;
    }

    /**
     * @return up to {@code n} prompts, slowest transfer first.
     */
    int[] slowest(final int n)
    {
        final Integer[] order = new Integer[count];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, (a, b) -> Long.compare(transferNanos(b), transferNanos(a)));
        return Arrays.stream(order).limit(n).mapToInt(Integer::intValue).toArray();
    }

    private long intersection(final int a, final int b)
    {
        return Math.min(end[a], end[b]) - Math.max(firstSubmit[a], firstSubmit[b]);
    }
}
