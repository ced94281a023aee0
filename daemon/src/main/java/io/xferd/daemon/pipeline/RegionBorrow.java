package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.Region;

/**
 * A transfer worker's borrow of one region, kept from one request to the next while they copy through the same
 * region: a run of requests between the same two regions costs two borrows, not two per request. A region that was
 * closed (unregistered) since is not used again: the borrow is given back and the request refused, as a fresh
 * {@link Region#tryAcquire()} would be. The worker gives the borrow back at the end of each duty cycle, so an
 * unregister waits at most one cycle longer for it. One worker thread; allocation-free.
 */
final class RegionBorrow
{
    private Region held;

    /**
     * @return true when {@code region} is borrowed (now, or still from an earlier request); false when it is closed.
     */
    boolean borrow(final Region region)
    {
        if (region == held)
        {
            if (!region.isClosed())
            {
                return true;
            }
            release();
            return false;
        }
        release();
        if (!region.tryAcquire())
        {
            return false;
        }
        held = region;
        return true;
    }

    /**
     * Give the borrow back, if any.
     */
    void release()
    {
        final Region region = held;
        if (region != null)
        {
            held = null;
            region.release();
        }
    }
}
