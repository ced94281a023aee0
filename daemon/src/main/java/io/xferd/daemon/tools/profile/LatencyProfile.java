package io.xferd.daemon.tools.profile;

import io.xferd.daemon.journal.JournalEntry;
import io.xferd.daemon.journal.JournalReader;
import io.xferd.daemon.journal.JournalRecordDescriptor;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Latency percentiles of the requests in a journal: submit-to-completion by operation, size bucket, peer and NIC,
 * and the stages of a request (queue wait, execution/wire, slice wire). Built from COMPLETED records (which carry
 * every timestamp of their request) and SLICE records, inside an optional [since, until) window of epoch time.
 */
public final class LatencyProfile
{
    public static final long MAX_NANOS = 3_600_000_000_000L;
    public static final String[] DIMENSIONS = {"operation", "size", "peer", "nic"};
    public static final String STAGE_QUEUE = "queue wait (client submit -> daemon intake)";
    public static final String STAGE_EXECUTION = "execution (intake -> completion written; local: the copy)";
    public static final String STAGE_TOTAL = "total (client submit -> completion written)";
    public static final String STAGE_SLICE_WIRE = "slice wire (sent -> acknowledged)";
    public static final String DELIVERY_NOTE = "completion delivery (completion written -> seen by the client): " +
        "not measured, clients do not report when they read their completions";

    private final Map<String, Map<String, Histogram>> byDimension = new LinkedHashMap<>();
    private final Map<String, Histogram> stages = new LinkedHashMap<>();
    private final Map<String, Long> statuses = new TreeMap<>();
    private final List<JournalEntry> traced = new ArrayList<>();
    private final Map<Integer, Histogram> peers = new TreeMap<>();
    private final Map<Integer, Histogram> nics = new TreeMap<>();
    private final long sinceEpochNs;
    private final long untilEpochNs;
    private final long traceId;
    private long completed;
    private long submitted;
    private long outsideWindow;
    private long firstEpochNs = Long.MAX_VALUE;
    private long lastEpochNs = Long.MIN_VALUE;
    private JournalReader reader;

    /**
     * @param traceId a trace id to collect every record of (see {@link #traced()}), or 0.
     */
    public LatencyProfile(final long sinceEpochNs, final long untilEpochNs, final long traceId)
    {
        this.sinceEpochNs = sinceEpochNs;
        this.untilEpochNs = untilEpochNs;
        this.traceId = traceId;
        for (final String dimension : DIMENSIONS)
        {
            byDimension.put(dimension, new TreeMap<>(LatencyProfile::compareKeys));
        }
        stages.put(STAGE_QUEUE, histogram());
        stages.put(STAGE_EXECUTION, histogram());
        stages.put(STAGE_TOTAL, histogram());
    }

    public static LatencyProfile read(final Path journal, final long since, final long until, final long traceId)
    {
        final LatencyProfile profile = new LatencyProfile(since, until, traceId);
        profile.reader = new JournalReader();
        profile.reader.read(journal, profile::add);
        profile.resolveNames();
        return profile;
    }

    void add(final JournalEntry entry)
    {
        final long at = entry.eventEpochNanos();
        if (at < sinceEpochNs || at >= untilEpochNs)
        {
            outsideWindow++;
            return; // a trace id of another run's records too: the window picks the run
        }
        if (traceId != 0 && entry.traceId() == traceId)
        {
            traced.add(entry);
        }
        switch (entry.type())
        {
            case JournalRecordDescriptor.SUBMITTED -> submitted++;
            case JournalRecordDescriptor.SLICE -> stages.computeIfAbsent(STAGE_SLICE_WIRE, key -> histogram())
                .recordValue(clamp(entry.ackNanos() - entry.sentNanos()));
            case JournalRecordDescriptor.COMPLETED -> addCompleted(entry, at);
            default ->
            {
            }
        }
    }

    private void addCompleted(final JournalEntry entry, final long at)
    {
        completed++;
        firstEpochNs = Math.min(firstEpochNs, at);
        lastEpochNs = Math.max(lastEpochNs, at);
        statuses.merge(TransferStatus.name(entry.status()), 1L, Long::sum);
        if (entry.status() != TransferStatus.OK)
        {
            return; // latency of failures would mix rejections with transfers
        }
        final long total = clamp(entry.completeNanos() - entry.submitNanos());
        stages.get(STAGE_QUEUE).recordValue(clamp(entry.intakeNanos() - entry.submitNanos()));
        stages.get(STAGE_EXECUTION).recordValue(clamp(entry.completeNanos() - entry.intakeNanos()));
        stages.get(STAGE_TOTAL).recordValue(total);
        record("operation", Opcode.name(entry.opcode()), total);
        record("size", sizeBucket(entry.length()), total);
        peers.computeIfAbsent(entry.peerId(), k -> histogram()).recordValue(total);
        nics.computeIfAbsent(entry.nicId(), k -> histogram()).recordValue(total);
    }

    /**
     * Peers and NICs are kept by id while reading: a cycle's names may come after its first records.
     */
    void resolveNames()
    {
        peers.forEach((id, histogram) -> merge("peer", name(id), histogram));
        nics.forEach((id, histogram) -> merge("nic", name(id), histogram));
    }

    private void merge(final String dimension, final String key, final Histogram histogram)
    {
        byDimension.get(dimension).computeIfAbsent(key, k -> histogram()).add(histogram);
    }

    private void record(final String dimension, final String key, final long value)
    {
        byDimension.get(dimension).computeIfAbsent(key, k -> histogram()).recordValue(value);
    }

    private String name(final int id)
    {
        return reader != null ? reader.name(id) : "#" + id;
    }

    static String sizeBucket(final long length)
    {
        if (length <= 4096)
        {
            return "<=4K";
        }
        if (length <= 65536)
        {
            return "<=64K";
        }
        if (length <= 1 << 20)
        {
            return "<=1M";
        }
        return length <= 16 << 20 ? "<=16M" : ">16M";
    }

    private static int compareKeys(final String a, final String b)
    {
        final List<String> sizes = List.of("<=4K", "<=64K", "<=1M", "<=16M", ">16M");
        final int ia = sizes.indexOf(a);
        final int ib = sizes.indexOf(b);
        return ia >= 0 && ib >= 0 ? Integer.compare(ia, ib) : a.compareTo(b);
    }

    private static long clamp(final long nanos)
    {
        return Math.max(0, Math.min(nanos, MAX_NANOS));
    }

    private static Histogram histogram()
    {
        return new Histogram(MAX_NANOS, 3);
    }

    public Map<String, Map<String, Histogram>> byDimension()
    {
        return byDimension;
    }

    public Map<String, Histogram> stages()
    {
        return stages;
    }

    public Map<String, Long> statuses()
    {
        return statuses;
    }

    public List<JournalEntry> traced()
    {
        return traced;
    }

    public long completed()
    {
        return completed;
    }

    public long submitted()
    {
        return submitted;
    }

    public long outsideWindow()
    {
        return outsideWindow;
    }

    public long firstEpochNs()
    {
        return firstEpochNs;
    }

    public long lastEpochNs()
    {
        return lastEpochNs;
    }

    public String nameOf(final int id)
    {
        return name(id);
    }
}
