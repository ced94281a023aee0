package io.xferd.daemon.tools.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.FileNotFoundException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Percentiles of a latency histogram (recorded in nanoseconds) as the bench prints them, and the optional
 * HdrHistogram log: one interval histogram per tag, readable by HdrHistogram's HistogramLogReader and plotting
 * tools.
 */
public final class LatencyReport
{
    /** Highest value the histograms track: one hour in nanoseconds; three significant digits. */
    public static final long HIGHEST_NANOS = 3_600_000_000_000L;

    private final Map<String, Histogram> logged = new LinkedHashMap<>();
    private final long startMs = System.currentTimeMillis();

    public static Histogram newHistogram()
    {
        return new Histogram(HIGHEST_NANOS, 3);
    }

    /**
     * @return "p50 812.3  p90 901.0  p99 1204.1  p99.9 2010.0  max 3001.2" in the given unit.
     */
    public static String percentiles(final Histogram histogram, final double nanosPerUnit)
    {
        return String.format(Locale.ROOT, "p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f",
            histogram.getValueAtPercentile(50) / nanosPerUnit, histogram.getValueAtPercentile(90) / nanosPerUnit,
            histogram.getValueAtPercentile(99) / nanosPerUnit, histogram.getValueAtPercentile(99.9) / nanosPerUnit,
            histogram.getMaxValue() / nanosPerUnit);
    }

    /**
     * @return "p50_us=812.3 p90_us=... max_us=..." for the machine-readable RESULT lines.
     */
    public static String percentileFields(final Histogram histogram, final String unit, final double nanosPerUnit)
    {
        return String.format(Locale.ROOT, "p50_%s=%.3f p90_%s=%.3f p99_%s=%.3f p999_%s=%.3f max_%s=%.3f",
            unit, histogram.getValueAtPercentile(50) / nanosPerUnit,
            unit, histogram.getValueAtPercentile(90) / nanosPerUnit,
            unit, histogram.getValueAtPercentile(99) / nanosPerUnit,
            unit, histogram.getValueAtPercentile(99.9) / nanosPerUnit,
            unit, histogram.getMaxValue() / nanosPerUnit);
    }

    /**
     * Keep a histogram for the log under {@code tag} (e.g. "write-1048576", "kv-8192").
     */
    public void add(final String tag, final Histogram histogram)
    {
        logged.put(tag, histogram);
    }

    /**
     * Write every added histogram as one tagged interval of an HdrHistogram log.
     */
    public void write(final Path file) throws FileNotFoundException
    {
        try (PrintStream out = new PrintStream(file.toFile()))
        {
            final HistogramLogWriter writer = new HistogramLogWriter(out);
            writer.outputComment("xferd bench: per-request latency in nanoseconds");
            writer.outputLogFormatVersion();
            writer.outputStartTime(startMs);
            writer.setBaseTime(startMs);
            writer.outputLegend();
            final long endMs = System.currentTimeMillis();
            logged.forEach((tag, histogram) ->
            {
                final Histogram copy = histogram.copy();
                copy.setTag(tag);
                copy.setStartTimeStamp(startMs);
                copy.setEndTimeStamp(endMs);
                writer.outputIntervalHistogram(copy);
            });
        }
    }
}
