package io.xferd.daemon.journal;

import org.HdrHistogram.Histogram;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;

import java.util.ArrayList;
import java.util.List;

import static io.xferd.daemon.journal.JournalRecordDescriptor.*;

/**
 * Completions counted by (opcode, peer, NIC, status) and their submit-to-complete latency by (opcode, peer, NIC):
 * written by the {@link JournalAgent} (off the hot path), read by the metrics endpoint at scrape time. One lock,
 * taken once per completion by the agent and once per scrape.
 */
public final class TransferStats
{
    /**
     * Highest latency the histograms track: 60 s in ns; slower completions are clamped to it.
     */
    public static final long MAX_TRACKED_NANOS = 60_000_000_000L;

    private final Long2ObjectHashMap<long[]> totals = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<Histogram> latencies = new Long2ObjectHashMap<>();

    /**
     * One row of a snapshot: counts and bytes of one (opcode, peer, NIC, status).
     */
    public record Total(int opcode, int peerId, int nicId, int status, long count, long bytes)
    {
    }

    /**
     * Latency of one (opcode, peer, NIC), a copy.
     */
    public record Latency(int opcode, int peerId, int nicId, Histogram histogram)
    {
    }

    static long key(final int opcode, final int peerId, final int nicId, final int status)
    {
        return ((long)(opcode & 0xFF) << 56) | ((long)(status & 0xFF) << 48) | ((long)(peerId & 0xFFFFFF) << 24) |
            (nicId & 0xFFFFFF);
    }

    void onCompleted(final DirectBuffer buffer, final int index)
    {
        final int opcode = buffer.getInt(index + COMPLETED_OPCODE);
        final int status = buffer.getInt(index + COMPLETED_STATUS);
        final int peer = buffer.getInt(index + COMPLETED_PEER);
        final int nic = buffer.getInt(index + COMPLETED_NIC);
        final long bytes = buffer.getLong(index + COMPLETED_BYTES);
        final long latency = buffer.getLong(index + COMPLETED_COMPLETE_NS) - buffer.getLong(index + COMPLETED_SUBMIT_NS);
        record(opcode, peer, nic, status, bytes, latency);
    }

    public synchronized void record(
        final int opcode, final int peer, final int nic, final int status, final long bytes, final long latencyNanos)
    {
        final long totalKey = key(opcode, peer, nic, status);
        long[] total = totals.get(totalKey);
        if (total == null)
        {
            total = new long[2];
            totals.put(totalKey, total);
        }
        total[0]++;
        total[1] += bytes;

        if (status != 0)
        {
            return; // the latency of rejections and failures would hide the transfers' own
        }
        final long latencyKey = key(opcode, peer, nic, 0);
        Histogram histogram = latencies.get(latencyKey);
        if (histogram == null)
        {
            histogram = new Histogram(MAX_TRACKED_NANOS, 2);
            latencies.put(latencyKey, histogram);
        }
        histogram.recordValue(Math.max(0, Math.min(latencyNanos, MAX_TRACKED_NANOS)));
    }

    public synchronized List<Total> totals()
    {
        final List<Total> rows = new ArrayList<>();
        totals.forEach((key, value) -> rows.add(new Total((int)(key >>> 56), (int)((key >>> 24) & 0xFFFFFF),
            (int)(key & 0xFFFFFF), (int)((key >>> 48) & 0xFF), value[0], value[1])));
        return rows;
    }

    public synchronized List<Latency> latencies()
    {
        final List<Latency> rows = new ArrayList<>();
        latencies.forEach((key, value) -> rows.add(new Latency((int)(key >>> 56), (int)((key >>> 24) & 0xFFFFFF),
            (int)(key & 0xFFFFFF), value.copy())));
        return rows;
    }
}
