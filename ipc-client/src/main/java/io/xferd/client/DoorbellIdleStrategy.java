package io.xferd.client;

import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * The client's default wait for completions: spin, yield, then sleep in the kernel on the completion ring's doorbell
 * until the daemon commits a record there (it wakes the sleeper, as {@code io_uring_enter} returns on a completion),
 * for at most {@code maxSleepNs} at a time, so that a daemon that never rings (an older one) or that died, and the
 * caller's timeout, are still noticed.
 * <p>
 * Only the client's own completion waits can sleep on the doorbell (they know the ring); anywhere else this strategy
 * parks {@value #PARK_NS} ns where it would sleep. One thread at a time, as Agrona's strategies.
 */
public final class DoorbellIdleStrategy implements IdleStrategy
{
    /** What {@link #idle(int)} parks where it cannot sleep on a doorbell: the old default's longest park. */
    public static final long PARK_NS = 50_000;

    private final int maxSpins;
    private final int maxYields;
    private final long maxSleepNs;
    private int spins;
    private int yields;

    /**
     * @param maxSpins   busy spins before yielding (a round trip is about a microsecond: the first spins usually find
     *                   the completion).
     * @param maxYields  yields after the spins, before sleeping.
     * @param maxSleepNs the longest one sleep on the doorbell (at least 1).
     */
    public DoorbellIdleStrategy(final int maxSpins, final int maxYields, final long maxSleepNs)
    {
        if (maxSpins < 0 || maxYields < 0 || maxSleepNs < 1)
        {
            throw new IllegalArgumentException("spins " + maxSpins + ", yields " + maxYields + ", sleep " +
                maxSleepNs + " ns");
        }
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.maxSleepNs = maxSleepNs;
    }

    public long maxSleepNs()
    {
        return maxSleepNs;
    }

    /**
     * One step of the back-off before sleeping: a spin or a yield, or nothing when it is time to sleep.
     *
     * @return true when the spins and yields are spent and the caller should sleep now.
     */
    boolean backOff(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
            return false;
        }
        if (spins < maxSpins)
        {
            spins++;
            Thread.onSpinWait();
            return false;
        }
        if (yields < maxYields)
        {
            yields++;
            Thread.yield();
            return false;
        }
        return true;
    }

    @Override
    public void idle(final int workCount)
    {
        if (backOff(workCount))
        {
            LockSupport.parkNanos(Math.min(PARK_NS, maxSleepNs));
        }
    }

    @Override
    public void idle()
    {
        idle(0);
    }

    @Override
    public void reset()
    {
        spins = 0;
        yields = 0;
    }

    @Override
    public String alias()
    {
        return "doorbell";
    }

    @Override
    public String toString()
    {
        return "DoorbellIdleStrategy{spins=" + maxSpins + ", yields=" + maxYields + ", maxSleepNs=" + maxSleepNs + "}";
    }
}
