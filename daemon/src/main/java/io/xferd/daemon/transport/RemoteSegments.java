package io.xferd.daemon.transport;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Handles this daemon gives its clients for segments of other daemons: negative longs
 * ({@code Long.MIN_VALUE | index}), so a handle says by its sign whether the target is local. Entries are
 * added by the control path and read lock-free by the data plane; they are never reused.
 */
public final class RemoteSegments
{
    private static final int CAPACITY = 1 << 16;

    private final AtomicReferenceArray<RemoteSegment> entries = new AtomicReferenceArray<>(CAPACITY);
    private int next;

    public static boolean isRemote(final long handle)
    {
        return handle < 0;
    }

    /**
     * @return the handle of an entry equal to this one (same name, remote handle and epoch) or of a new entry.
     */
    public synchronized long add(final RemoteSegment segment)
    {
        for (int i = 0; i < next; i++)
        {
            final RemoteSegment existing = entries.get(i);
            if (existing.name().equals(segment.name()) && existing.remoteHandle() == segment.remoteHandle() &&
                existing.epoch() == segment.epoch())
            {
                return Long.MIN_VALUE | i;
            }
        }
        if (next == CAPACITY)
        {
            throw new IllegalStateException("too many remote segments opened: " + CAPACITY);
        }
        entries.set(next, segment);
        return Long.MIN_VALUE | next++;
    }

    /**
     * @return the entry a remote handle names, or null.
     */
    public RemoteSegment get(final long handle)
    {
        if (!isRemote(handle))
        {
            return null;
        }
        final long index = handle & Long.MAX_VALUE;
        return index < CAPACITY ? entries.get((int)index) : null;
    }
}
