package io.xferd.topology;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One row of the topology matrix: the NICs to use for memory at a location, and the NICs that may be
 * used when the preferred ones are down or busy. A NIC appears at most once in a row.
 */
public record MatrixRow(List<String> preferred, List<String> available)
{
    public MatrixRow
    {
        preferred = List.copyOf(preferred);
        available = List.copyOf(available);
        final Set<String> seen = new HashSet<>();
        for (final String nic : preferred)
        {
            requireOnce(seen, nic);
        }
        for (final String nic : available)
        {
            requireOnce(seen, nic);
        }
    }

    private static void requireOnce(final Set<String> seen, final String nic)
    {
        if (null == nic || nic.isEmpty())
        {
            throw new IllegalArgumentException("empty NIC name in a topology matrix row");
        }
        if (!seen.add(nic))
        {
            throw new IllegalArgumentException("NIC " + nic + " is listed twice in one topology matrix row");
        }
    }

    /** @return true when the row names no NIC at all. */
    public boolean isEmpty()
    {
        return preferred.isEmpty() && available.isEmpty();
    }
}
