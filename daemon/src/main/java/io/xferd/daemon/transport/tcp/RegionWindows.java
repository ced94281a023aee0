package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.memory.Region;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * ByteBuffer windows onto registered regions for one thread's socket I/O, reused so that steady traffic
 * allocates nothing (NIO channels take ByteBuffers, and a fresh view per slice is two objects per slice).
 * Each slot keeps a view of up to {@link #CHUNK} bytes of one region's mapping; a window is that view with its
 * position and limit set. Slots are taken round robin, so a window stays valid until {@code slots} more have
 * been taken: callers size it to what they hold at once (a gathering write's payloads). A window straddling a
 * chunk boundary is a one-off view (allocates; regions over 1 GiB with unaligned slices only).
 */
final class RegionWindows
{
    static final long CHUNK = 1L << 30;

    private final Region[] regions;
    private final long[] chunkStarts;
    private final ByteBuffer[] views;
    private int next;

    RegionWindows(final int slots)
    {
        regions = new Region[slots];
        chunkStarts = new long[slots];
        views = new ByteBuffer[slots];
    }

    /**
     * @param offset from the start of the region's registered bytes; [offset, offset + length) must lie in it.
     * @return a buffer whose remaining bytes are exactly those, over the region's memory.
     */
    ByteBuffer window(final Region region, final long offset, final long length)
    {
        return window(region, region.mapping(), offset, length);
    }

    /**
     * {@link #window(Region, long, long)} over {@code bytes}, the region's bytes in another mapping than its own
     * (a tmpfs file region's pages: {@code StorageFile.pageCacheBytes}); always the same for one region.
     */
    ByteBuffer window(final Region region, final MemorySegment bytes, final long offset, final long length)
    {
        final long chunkStart = offset & -CHUNK;
        if (offset + length - chunkStart > CHUNK)
        {
            return bytes.asSlice(offset, length).asByteBuffer();
        }
        final int slot = next;
        next = slot + 1 == views.length ? 0 : slot + 1;
        ByteBuffer view = views[slot];
        if (regions[slot] != region || chunkStarts[slot] != chunkStart)
        {
            view = bytes.asSlice(chunkStart, Math.min(CHUNK, bytes.byteSize() - chunkStart)).asByteBuffer();
            views[slot] = view;
            regions[slot] = region;
            chunkStarts[slot] = chunkStart;
        }
        view.clear().limit((int)(offset - chunkStart + length)).position((int)(offset - chunkStart));
        return view;
    }
}
