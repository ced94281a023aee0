package io.xferd.daemon.tools.profile;

import io.xferd.daemon.journal.JournalEntry;
import io.xferd.daemon.journal.JournalRecordDescriptor;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.HdrHistogram.Histogram;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * The profile as text tables: count, p50, p90, p99, p99.9 and max per key.
 */
public final class ProfileReport
{
    public static final double[] PERCENTILES = {50, 90, 99, 99.9};

    private ProfileReport()
    {
    }

    public static void print(final LatencyProfile profile, final PrintWriter out)
    {
        if (profile.completed() == 0)
        {
            out.printf("no completed requests in the journal%s (%d record(s) outside the window)%n",
                profile.outsideWindow() > 0 ? " window" : "", profile.outsideWindow());
            return;
        }
        out.printf("%,d completed request(s) from %s to %s; %,d submitted in the window; statuses %s%n",
            profile.completed(), Instant.ofEpochSecond(0, profile.firstEpochNs()),
            Instant.ofEpochSecond(0, profile.lastEpochNs()), profile.submitted(), profile.statuses());
        out.println("latency of successful requests, client submit -> completion written by the daemon");
        for (final Map.Entry<String, Map<String, Histogram>> dimension : profile.byDimension().entrySet())
        {
            out.println();
            table(out, "by " + dimension.getKey(), dimension.getValue());
        }
        out.println();
        table(out, "stages", profile.stages());
        out.println("  " + LatencyProfile.DELIVERY_NOTE);
    }

    static void table(final PrintWriter out, final String title, final Map<String, Histogram> rows)
    {
        int width = title.length();
        for (final String key : rows.keySet())
        {
            width = Math.max(width, key.length());
        }
        out.printf("  %-" + width + "s %12s %10s %10s %10s %10s %10s%n", title, "count", "p50", "p90", "p99", "p99.9",
            "max");
        for (final Map.Entry<String, Histogram> row : rows.entrySet())
        {
            final Histogram h = row.getValue();
            out.printf("  %-" + width + "s %,12d %10s %10s %10s %10s %10s%n", row.getKey(), h.getTotalCount(),
                duration(h.getValueAtPercentile(50)), duration(h.getValueAtPercentile(90)),
                duration(h.getValueAtPercentile(99)), duration(h.getValueAtPercentile(99.9)),
                duration(h.getMaxValue()));
        }
    }

    public static void printTrace(final LatencyProfile profile, final long traceId, final PrintWriter out)
    {
        out.printf("trace %s: %d record(s)%n", Long.toHexString(traceId), profile.traced().size());
        for (final JournalEntry e : profile.traced())
        {
            final String at = Instant.ofEpochSecond(0, e.eventEpochNanos()).toString();
            switch (e.type())
            {
                case JournalRecordDescriptor.SUBMITTED -> out.printf(
                    "  %s submitted  request %d slot %d %s %,d B, queue wait %s%n", at, e.requestId(),
                    e.clientSlot(), Opcode.name(e.opcode()), e.length(), duration(e.intakeNanos() - e.submitNanos()));
                case JournalRecordDescriptor.SLICED -> out.printf("  %s sliced     request %d into %d slice(s)%n",
                    at, e.requestId(), e.sliceCount());
                case JournalRecordDescriptor.SLICE -> out.printf(
                    "  %s slice %d    request %d %,d B peer %s nic %s wire %s status %s%n", at, e.sliceIndex(),
                    e.requestId(), e.length(), profile.nameOf(e.peerId()), profile.nameOf(e.nicId()),
                    duration(e.ackNanos() - e.sentNanos()), TransferStatus.name(e.status()));
                default -> out.printf(
                    "  %s completed  request %d %s %,d B peer %s nic %s status %s: total %s (queue %s, execution %s)%n",
                    at, e.requestId(), Opcode.name(e.opcode()), e.length(), profile.nameOf(e.peerId()),
                    profile.nameOf(e.nicId()), TransferStatus.name(e.status()),
                    duration(e.completeNanos() - e.submitNanos()), duration(e.intakeNanos() - e.submitNanos()),
                    duration(e.completeNanos() - e.intakeNanos()));
            }
        }
    }

    /**
     * @return ns as "850 ns", "12.3 us", "4.56 ms" or "1.20 s".
     */
    public static String duration(final long nanos)
    {
        if (nanos < 1_000)
        {
            return nanos + " ns";
        }
        if (nanos < 1_000_000)
        {
            return String.format(Locale.ROOT, "%.1f us", nanos / 1e3);
        }
        if (nanos < 1_000_000_000)
        {
            return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
        }
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }
}
