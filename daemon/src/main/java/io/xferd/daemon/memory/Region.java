package io.xferd.daemon.memory;

import java.lang.foreign.MemorySegment;

/**
 * One registered range of a client's memory: the owner's own virtual address and length, and the daemon's
 * mapping of the same bytes. Requests name it by the owner's address; the daemon copies through the mapping.
 */
public final class Region extends RefCounted
{
    private final long ownerAddress;
    private final long length;
    private final String location;
    private final MemorySegment mapping;
    private final MemorySegment wholeMapping;

    /**
     * @param mapping      the daemon's view of exactly the registered bytes.
     * @param wholeMapping what was mmapped (page aligned, may start before {@code mapping}); unmapped at the end.
     */
    public Region(
        final long ownerAddress,
        final long length,
        final String location,
        final MemorySegment mapping,
        final MemorySegment wholeMapping)
    {
        this.ownerAddress = ownerAddress;
        this.length = length;
        this.location = location;
        this.mapping = mapping;
        this.wholeMapping = wholeMapping;
    }

    public long ownerAddress()
    {
        return ownerAddress;
    }

    public long length()
    {
        return length;
    }

    public String location()
    {
        return location;
    }

    public MemorySegment mapping()
    {
        return mapping;
    }

    public MemorySegment wholeMapping()
    {
        return wholeMapping;
    }

    /**
     * @return true when [address, address + length) lies inside this region; overflow safe.
     */
    public boolean contains(final long address, final long requestLength)
    {
        return address >= ownerAddress && requestLength <= length &&
            address - ownerAddress <= length - requestLength;
    }

    public long offsetOf(final long address)
    {
        return address - ownerAddress;
    }

    @Override
    public String toString()
    {
        return "Region[0x" + Long.toHexString(ownerAddress) + "+" + length + " " + location + "]";
    }
}
