package io.xferd.daemon.transport.tcp;

/**
 * When a {@link PeerPath} may take slices again after its connection broke: a failure pauses it for 200 ms, each
 * failure after a pause has ended pauses it twice as long (up to 5 s), failures during a pause do not lengthen it,
 * and an answer that succeeds resets the back-off. A path whose pause has ended is usable again (the next slice
 * probes it). Time is whatever clock the caller reads; no I/O, no threads.
 * <p>
 * Thread safety: {@link #failed} and {@link #resumed} are synchronized (rare); {@link #isOver} is a volatile read,
 * per slice.
 */
final class PathPause
{
    static final long MIN_PAUSE_NS = 200_000_000L;
    static final long MAX_PAUSE_NS = 5_000_000_000L;

    private volatile long pausedUntilNs;
    private long pauseNs = MIN_PAUSE_NS;

    /**
     * @return true unless a pause started and has not ended at {@code nowNs} (it ends at exactly its deadline).
     */
    boolean isOver(final long nowNs)
    {
        return nowNs >= pausedUntilNs;
    }

    /**
     * @return when the current or last pause ends (0 before the first).
     */
    long pausedUntilNs()
    {
        return pausedUntilNs;
    }

    /**
     * The path failed at {@code nowNs}: pause it unless it is paused already.
     *
     * @return how long the new pause is, or 0 when one was still running.
     */
    synchronized long failed(final long nowNs)
    {
        if (nowNs < pausedUntilNs)
        {
            return 0;
        }
        final long pause = pauseNs;
        pausedUntilNs = nowNs + pause;
        pauseNs = Math.min(MAX_PAUSE_NS, pause * 2);
        return pause;
    }

    /**
     * An answer succeeded: the next failure pauses for the shortest time again.
     */
    synchronized void resumed()
    {
        pauseNs = MIN_PAUSE_NS;
    }
}
