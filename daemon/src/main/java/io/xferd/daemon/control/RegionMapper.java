package io.xferd.daemon.control;

import io.xferd.daemon.memory.Region;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;

import java.lang.foreign.MemorySegment;

/**
 * Maps the memory a client shared (a memfd or file descriptor and an offset in it) into the daemon, so that
 * transfers copy straight between two clients' pages. mmap offsets must be page aligned; the region's view
 * starts wherever the client's range starts inside the mapping.
 */
final class RegionMapper
{
    static final long PAGE_SIZE = 4096;

    private RegionMapper()
    {
    }

    /**
     * Map and take ownership of {@code fd} (closed here whatever happens; the mapping keeps the memory).
     */
    static Region map(
        final int fd, final long fdOffset, final long ownerAddress, final long length, final String location)
    {
        try
        {
            final long alignedOffset = fdOffset & ~(PAGE_SIZE - 1);
            final long lead = fdOffset - alignedOffset;
            final MemorySegment whole = MappedMemory.mapSharedPopulated(fd, alignedOffset, lead + length);
            return new Region(ownerAddress, length, location, whole.asSlice(lead, length), whole);
        }
        finally
        {
            Memfd.close(fd);
        }
    }

    static void unmap(final Region region)
    {
        MappedMemory.unmap(region.wholeMapping());
    }
}
