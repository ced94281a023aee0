package io.xferd.daemon.memory;

import java.util.Arrays;

/**
 * An immutable, sorted table of one segment's regions, searched by the owner's address with a binary search
 * (no allocation). The conductor replaces the whole table on register/unregister (copy on write); the data
 * plane reads whichever table was current when it looked.
 */
public final class RegionTable
{
    public static final RegionTable EMPTY = new RegionTable(new Region[0]);

    private final Region[] regions;
    private final long[] starts;

    private RegionTable(final Region[] sortedRegions)
    {
        this.regions = sortedRegions;
        this.starts = new long[sortedRegions.length];
        for (int i = 0; i < sortedRegions.length; i++)
        {
            starts[i] = sortedRegions[i].ownerAddress();
        }
    }

    /**
     * @return the region that holds all of [address, address + length), or null.
     */
    public Region find(final long address, final long length)
    {
        int low = 0;
        int high = starts.length - 1;
        while (low <= high)
        {
            final int mid = (low + high) >>> 1;
            if (starts[mid] <= address)
            {
                low = mid + 1;
            }
            else
            {
                high = mid - 1;
            }
        }
        if (high < 0)
        {
            return null;
        }
        final Region candidate = regions[high];
        return candidate.contains(address, length) ? candidate : null;
    }

    /**
     * @return the region that starts exactly at address, or null.
     */
    public Region startingAt(final long address)
    {
        final int index = Arrays.binarySearch(starts, address);
        return index >= 0 ? regions[index] : null;
    }

    /**
     * @return true when [address, address + length) touches any region of this table.
     */
    public boolean overlaps(final long address, final long length)
    {
        for (final Region region : regions)
        {
            final long end = address + length;
            final long regionEnd = region.ownerAddress() + region.length();
            if (address < regionEnd && region.ownerAddress() < end)
            {
                return true;
            }
        }
        return false;
    }

    public RegionTable with(final Region region)
    {
        final Region[] copy = Arrays.copyOf(regions, regions.length + 1);
        copy[regions.length] = region;
        Arrays.sort(copy, (a, b) -> Long.compare(a.ownerAddress(), b.ownerAddress()));
        return new RegionTable(copy);
    }

    public RegionTable without(final Region region)
    {
        final Region[] copy = new Region[regions.length - 1];
        int j = 0;
        for (final Region r : regions)
        {
            if (r != region)
            {
                copy[j++] = r;
            }
        }
        return new RegionTable(copy);
    }

    public int size()
    {
        return regions.length;
    }

    public Region get(final int index)
    {
        return regions[index];
    }

    public long totalBytes()
    {
        long total = 0;
        for (final Region region : regions)
        {
            total += region.length();
        }
        return total;
    }
}
