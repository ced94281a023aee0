package io.xferd.daemon.tools.bench;

import picocli.CommandLine.ITypeConverter;

import java.time.Duration;
import java.util.Locale;

/**
 * Sizes and durations as the bench's options take them ("1MiB", "64KiB", "4096", "10s", "500ms") and as its
 * output prints them.
 */
public final class Units
{
    private Units()
    {
    }

    /**
     * @param text a byte count with an optional unit: B, KiB/K, MiB/M, GiB/G (powers of 1024), KB/MB/GB (powers
     *             of 1000); case-insensitive.
     */
    public static long parseBytes(final String text)
    {
        final String value = text.trim().toLowerCase(Locale.ROOT);
        int end = 0;
        while (end < value.length() && (Character.isDigit(value.charAt(end)) || value.charAt(end) == '.'))
        {
            end++;
        }
        if (end == 0)
        {
            throw new IllegalArgumentException("not a size: '" + text + "' (e.g. 4096, 64KiB, 1MiB, 2GiB)");
        }
        final long multiplier = switch (value.substring(end).trim())
        {
            case "", "b" -> 1L;
            case "k", "kib" -> 1L << 10;
            case "m", "mib" -> 1L << 20;
            case "g", "gib" -> 1L << 30;
            case "kb" -> 1_000L;
            case "mb" -> 1_000_000L;
            case "gb" -> 1_000_000_000L;
            default -> throw new IllegalArgumentException(
                "unknown size unit in '" + text + "' (B, KiB, MiB, GiB, KB, MB, GB)");
        };
        final double number = Double.parseDouble(value.substring(0, end));
        final double bytes = number * multiplier;
        if (bytes != Math.floor(bytes) || bytes > Long.MAX_VALUE)
        {
            throw new IllegalArgumentException("not a whole number of bytes: '" + text + "'");
        }
        return (long)bytes;
    }

    /**
     * @param text a duration: a number with ms, s, m or h ("500ms", "10s", "2m"); a bare number is seconds.
     */
    public static Duration parseDuration(final String text)
    {
        final String value = text.trim().toLowerCase(Locale.ROOT);
        int end = 0;
        while (end < value.length() && (Character.isDigit(value.charAt(end)) || value.charAt(end) == '.'))
        {
            end++;
        }
        if (end == 0)
        {
            throw new IllegalArgumentException("not a duration: '" + text + "' (e.g. 500ms, 10s, 2m)");
        }
        final double number = Double.parseDouble(value.substring(0, end));
        final double nanosPerUnit = switch (value.substring(end).trim())
        {
            case "ms" -> 1e6;
            case "", "s" -> 1e9;
            case "m", "min" -> 60e9;
            case "h" -> 3600e9;
            default -> throw new IllegalArgumentException("unknown duration unit in '" + text + "' (ms, s, m, h)");
        };
        return Duration.ofNanos(Math.round(number * nanosPerUnit));
    }

    /**
     * @return "1 MiB", "64 KiB", "1000 B": the largest binary unit that divides the value, else bytes.
     */
    public static String formatBytes(final long bytes)
    {
        if (bytes >= 1L << 30 && bytes % (1L << 30) == 0)
        {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= 1L << 20 && bytes % (1L << 20) == 0)
        {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1L << 10 && bytes % (1L << 10) == 0)
        {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }

    /** picocli converter for size options. */
    public static final class ByteSize implements ITypeConverter<Long>
    {
        @Override
        public Long convert(final String value)
        {
            return parseBytes(value);
        }
    }

    /** picocli converter for duration options. */
    public static final class TimeSpan implements ITypeConverter<Duration>
    {
        @Override
        public Duration convert(final String value)
        {
            return parseDuration(value);
        }
    }
}
