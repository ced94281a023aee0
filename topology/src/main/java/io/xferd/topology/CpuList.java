package io.xferd.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The kernel's cpulist syntax ({@code Documentation/admin-guide/cputopology.rst}): comma separated CPU
 * numbers and inclusive ranges, e.g. {@code "0-3,8-11"}; a range may carry a pattern
 * {@code :used/group} ({@code "0-15:2/4"} is the first two CPUs of every four, {@code "0-15:1/2"} every
 * second one), as the kernel's {@code bitmap_parselist} accepts. An empty string is the empty list.
 */
public final class CpuList
{
    private CpuList()
    {
    }

    /**
     * @return the CPUs, sorted and without duplicates.
     * @throws IllegalArgumentException when the text is not in cpulist syntax.
     */
    public static List<Integer> parse(final String text)
    {
        final TreeSet<Integer> cpus = new TreeSet<>();
        final String trimmed = null == text ? "" : text.trim();
        if (trimmed.isEmpty())
        {
            return List.of();
        }
        for (final String part : trimmed.split(","))
        {
            try
            {
                parseGroup(part.trim(), cpus);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("not a cpulist: \"" + text + "\"", ex);
            }
        }
        return List.copyOf(cpus);
    }

    private static void parseGroup(final String part, final TreeSet<Integer> cpus)
    {
        if (part.isEmpty())
        {
            throw new NumberFormatException("empty group");
        }
        final int dash = part.indexOf('-');
        if (dash < 0)
        {
            cpus.add(nonNegative(part));
            return;
        }
        final int colon = part.indexOf(':');
        final int first = nonNegative(part.substring(0, dash));
        final int last = nonNegative(part.substring(dash + 1, colon < 0 ? part.length() : colon));
        int used = 1;
        int group = 1;
        if (colon >= 0)
        {
            final String pattern = part.substring(colon + 1);
            final int slash = pattern.indexOf('/');
            if (slash < 0)
            {
                throw new NumberFormatException("pattern without /group_size in " + part);
            }
            used = nonNegative(pattern.substring(0, slash));
            group = nonNegative(pattern.substring(slash + 1));
        }
        if (last < first || used < 1 || group < used)
        {
            throw new NumberFormatException("bad range " + part);
        }
        for (int cpu = first; cpu <= last; cpu++)
        {
            if ((cpu - first) % group < used)
            {
                cpus.add(cpu);
            }
        }
    }

    private static int nonNegative(final String digits)
    {
        final int value = Integer.parseInt(digits.trim());
        if (value < 0)
        {
            throw new NumberFormatException("negative " + digits);
        }
        return value;
    }

    /** @return the CPUs in the compact form the kernel writes, e.g. {@code [0,1,2,3,8]} as {@code "0-3,8"}. */
    public static String format(final List<Integer> cpus)
    {
        final List<Integer> sorted = new ArrayList<>(new TreeSet<>(cpus));
        final StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < sorted.size())
        {
            int j = i;
            while (j + 1 < sorted.size() && sorted.get(j + 1) == sorted.get(j) + 1)
            {
                j++;
            }
            if (!out.isEmpty())
            {
                out.append(',');
            }
            out.append(sorted.get(i));
            if (j > i)
            {
                out.append('-').append(sorted.get(j));
            }
            i = j + 1;
        }
        return out.toString();
    }
}
