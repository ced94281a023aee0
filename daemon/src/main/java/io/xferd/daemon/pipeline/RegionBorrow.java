package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.Region;

/**
 * A transfer worker's borrow of one region, kept from one request to the next while they copy through the same
 * region, across duty cycles: a stream of requests between the same two regions costs two borrows, not two per
 * request (nor two per duty cycle: a lone request per cycle, as a caller waiting for each answer sends them, would
 * otherwise pay two compare-and-sets and two atomic decrements each).
 * <p>
 * What keeps an unregister from waiting on it: a region that was closed (unregistered) since is not used again, the
 * borrow is given back and the request refused, as a fresh {@link Region#tryAcquire()} would be; and at the end of
 * every duty cycle ({@link #endCycle()}) the worker gives back a borrow whose region was closed meanwhile, so an
 * unregister waits at most for the cycle in progress, as when borrows ended with each cycle. A borrow no request used
 * for {@link #IDLE_CYCLES} cycles is given back too: an idle data-plane thread may sleep on its clients' doorbells,
 * and must hold nothing an unregister waits for while it does. One worker thread; allocation-free.
 */
final class RegionBorrow
{
    /**
     * Duty cycles without a request through the region after which the borrow is given back: fewer than the data
     * plane's idle strategies spin and yield before their first park, far fewer than before they sleep.
     */
    static final int IDLE_CYCLES = 64;

    private Region held;
    private boolean used;
    private int idleCycles;

    /**
     * @return true when {@code region} is borrowed (now, or still from an earlier request); false when it is closed.
     */
    boolean borrow(final Region region)
    {
        if (region == held)
        {
            if (!region.isClosed())
            {
                used = true;
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
        used = true;
        return true;
    }

    /**
     * The worker's duty cycle ended (its copies are done): give the borrow back when its region was closed meanwhile
     * or no request used it for {@link #IDLE_CYCLES} cycles; otherwise keep it for the next requests.
     */
    void endCycle()
    {
        final Region region = held;
        if (region == null)
        {
            return;
        }
        if (used)
        {
            used = false;
            idleCycles = 0;
        }
        else
        {
            idleCycles++;
        }
        if (idleCycles >= IDLE_CYCLES || region.isClosed())
        {
            release();
        }
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
            used = false;
            idleCycles = 0;
            region.release();
        }
    }

    /**
     * @return true while a region is borrowed.
     */
    boolean isHeld()
    {
        return held != null;
    }
}
