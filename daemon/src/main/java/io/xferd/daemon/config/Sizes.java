package io.xferd.daemon.config;

import java.util.Locale;

/**
 * Byte sizes as an operator writes them: {@code 524288}, {@code "512KiB"}, {@code "1 MiB"}, {@code "2G"}. Units
 * are binary (K = KiB = 1024); {@code KB}/{@code MB}/{@code GB} are refused because they are read both ways.
 */
public final class Sizes
{
    private Sizes()
    {
    }

    /**
     * @return the number of bytes.
     * @throws IllegalArgumentException saying what is accepted.
     */
    public static long parseBytes(final String text)
    {
        final String value = text.trim();
        int end = 0;
        while (end < value.length() && Character.isDigit(value.charAt(end)))
        {
            end++;
        }
        if (end == 0 || end > 18)
        {
            throw invalid(text);
        }
        final long number = Long.parseLong(value.substring(0, end));
        final String unit = value.substring(end).trim().toLowerCase(Locale.ROOT);
        final long multiplier = switch (unit)
        {
            case "", "b" -> 1L;
            case "k", "kib" -> 1L << 10;
            case "m", "mib" -> 1L << 20;
            case "g", "gib" -> 1L << 30;
            case "kb", "mb", "gb" -> throw new IllegalArgumentException("size '" + text + "': " +
                unit.toUpperCase(Locale.ROOT) + " is read as 1000 or 1024; write KiB, MiB or GiB");
            default -> throw invalid(text);
        };
        if (number > Long.MAX_VALUE / multiplier)
        {
            throw invalid(text);
        }
        return number * multiplier;
    }

    private static IllegalArgumentException invalid(final String text)
    {
        return new IllegalArgumentException("size '" + text + "' must be a number of bytes, optionally with a unit " +
            "B, KiB, MiB or GiB (e.g. \"512KiB\")");
    }
}
