package io.xferd.client;

import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * The client's default wait for completions: spin, yield, park a little (1 to 50 us, growing, until the parks asked
 * for add up to {@code parkPhaseNs}; timer slack makes short parks last longer), then sleep in the kernel on the completion ring's doorbell until the daemon commits a record
 * there (it wakes the sleeper, as {@code io_uring_enter} returns on a completion), for at most {@code maxSleepNs} at a
 * time, so that a daemon that never rings (an older one) or that died, and the caller's timeout, are still noticed.
 * <p>
 * Why parks before the sleep: a futex wake-up costs the daemon's thread a system call and the sleeper a scheduler
 * round trip (tens to hundreds of microseconds on a busy VM), which a wait of a few microseconds should not pay; a
 * wait that outlasts the park phase (a file read, a transfer between hosts) sleeps, and costs no CPU meanwhile.
 * <p>
 * Only the client's own completion waits can sleep on the doorbell (they know the ring); anywhere else this strategy
 * parks {@value #PARK_NS} ns where it would sleep. One thread at a time, as Agrona's strategies.
 */
public final class DoorbellIdleStrategy implements IdleStrategy
{
    /** The longest park, in the park phase and where it cannot sleep on a doorbell: the old default's. */
    public static final long PARK_NS = 50_000;
    private static final long FIRST_PARK_NS = 1_000;

    private final int maxSpins;
    private final int maxYields;
    private final long parkPhaseNs;
    private final long maxSleepNs;
    private int spins;
    private int yields;
    private long parkNs = FIRST_PARK_NS;
    private long parkedNs;

    /**
     * A strategy that sleeps on the doorbell as soon as its spins and yields are spent (no park phase).
     *
     * @param maxSpins   busy spins before yielding.
     * @param maxYields  yields after the spins, before sleeping.
     * @param maxSleepNs the longest one sleep on the doorbell (at least 1; a wait's own timeout bounds it too: the
     *                   daemon's liveness is looked at between sleeps).
     */
    public DoorbellIdleStrategy(final int maxSpins, final int maxYields, final long maxSleepNs)
    {
        this(maxSpins, maxYields, 0, maxSleepNs);
    }

    /**
     * @param maxSpins    busy spins before yielding (a round trip is about a microsecond: the first spins usually find
     *                    the completion).
     * @param maxYields   yields after the spins.
     * @param parkPhaseNs how long, in all, to park (1 to 50 us at a time) after the yields before sleeping.
     * @param maxSleepNs  the longest one sleep on the doorbell (at least 1; a wait's own timeout bounds it too).
     */
    public DoorbellIdleStrategy(final int maxSpins, final int maxYields, final long parkPhaseNs, final long maxSleepNs)
    {
        if (maxSpins < 0 || maxYields < 0 || parkPhaseNs < 0 || maxSleepNs < 1)
        {
            throw new IllegalArgumentException("spins " + maxSpins + ", yields " + maxYields + ", park phase " +
                parkPhaseNs + " ns, sleep " + maxSleepNs + " ns");
        }
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.parkPhaseNs = parkPhaseNs;
        this.maxSleepNs = maxSleepNs;
    }

    public long maxSleepNs()
    {
        return maxSleepNs;
    }

    /**
     * One step of the back-off before sleeping: a spin, a yield or a park, or nothing when it is time to sleep.
     *
     * @return true when the spins, yields and parks are spent and the caller should sleep now.
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
        if (parkedNs < parkPhaseNs)
        {
            LockSupport.parkNanos(parkNs);
            parkedNs += parkNs; // the asked time: a park cut short counts whole, so the phase stays bounded in steps
            parkNs = Math.min(parkNs << 1, PARK_NS);
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
        parkNs = FIRST_PARK_NS;
        parkedNs = 0;
    }

    @Override
    public String alias()
    {
        return "doorbell";
    }

    @Override
    public String toString()
    {
        return "DoorbellIdleStrategy{spins=" + maxSpins + ", yields=" + maxYields + ", parkPhaseNs=" + parkPhaseNs +
            ", maxSleepNs=" + maxSleepNs + "}";
    }
}
