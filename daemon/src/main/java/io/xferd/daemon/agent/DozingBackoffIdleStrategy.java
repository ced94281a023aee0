package io.xferd.daemon.agent;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.concurrent.locks.LockSupport;

/**
 * Backs off as {@link BackoffIdleStrategy} does (spin, yield, park growing to a short maximum) while work comes
 * and goes, then dozes in longer parks once nothing has come for a long stretch. A thread polling a shared-memory
 * ring cannot be woken by its producers, so it must poll; but polling every 100 µs costs an idle daemon a
 * measurable share of a core on a small VM (each wake-up is tens of µs there), while a 1 ms doze adds at most
 * 1 ms to the first request after a quiet spell and nothing to requests that follow one another. After a much longer
 * quiet stretch it may doze deeper (longer parks): the first request after that waits up to the deeper doze.
 * <p>
 * Optionally it first spins for a short window after the last work ({@code spinNanos}): a client that waits for one
 * answer before it submits the next (one small READ at a time to another host, answered in tens of µs) then finds
 * the thread awake, not in a park of up to {@code maxParkPeriodNs}. The window costs CPU only after work.
 * <p>
 * With a {@link #doorbell(Doorbell, long) doorbell}, the deeper doze is a sleep instead: the strategy arms the
 * doorbell, lets one more duty cycle look for work, then waits on it for up to {@code sleepNanos}; a producer that
 * publishes meanwhile wakes it at once. Work disarms it. {@link #sleepOnDoorbellAfter(long)} tries the doorbell
 * earlier, in place of the back-off's parks: each park is a futex wait and a timer whether or not work came (a
 * thread that idles between every batch of a client's small requests parked ~10 times per batch), where one sleep
 * ends when a producer rings. Where the doorbell will not arm, it parks as before.
 */
public final class DozingBackoffIdleStrategy implements IdleStrategy
{
    private final BackoffIdleStrategy backoff;
    private final long idlesBeforeParking;
    private final long idlesBeforeDozing;
    private final long dozeNanos;
    private final long idlesBeforeDeepDoze;
    private final long deepDozeNanos;
    private final long spinNanos;
    private final NanoClock clock;
    private long idles;
    private long spinUntilNanos;
    private boolean spinning;
    private Doorbell doorbell;
    private long sleepNanos;
    private long idlesBeforeDoorbell = Long.MAX_VALUE;
    private boolean armed;
    private boolean marked;

    /**
     * @param idlesBeforeDozing idle calls without work before dozing (at the maximum park that is roughly
     *                          {@code idlesBeforeDozing * maxParkPeriodNs} of quiet).
     */
    public DozingBackoffIdleStrategy(
        final long maxSpins,
        final long maxYields,
        final long minParkPeriodNs,
        final long maxParkPeriodNs,
        final long idlesBeforeDozing,
        final long dozeNanos)
    {
        this(maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs, idlesBeforeDozing, dozeNanos, Long.MAX_VALUE,
            dozeNanos);
    }

    /**
     * @param idlesBeforeDeepDoze idle calls without work (counting the dozes) before dozing {@code deepDozeNanos}.
     */
    public DozingBackoffIdleStrategy(
        final long maxSpins,
        final long maxYields,
        final long minParkPeriodNs,
        final long maxParkPeriodNs,
        final long idlesBeforeDozing,
        final long dozeNanos,
        final long idlesBeforeDeepDoze,
        final long deepDozeNanos)
    {
        this(maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs, idlesBeforeDozing, dozeNanos, idlesBeforeDeepDoze,
            deepDozeNanos, 0);
    }

    /**
     * @param spinNanos how long to spin after the last work before backing off (0: back off at once).
     */
    public DozingBackoffIdleStrategy(
        final long maxSpins,
        final long maxYields,
        final long minParkPeriodNs,
        final long maxParkPeriodNs,
        final long idlesBeforeDozing,
        final long dozeNanos,
        final long idlesBeforeDeepDoze,
        final long deepDozeNanos,
        final long spinNanos)
    {
        this(maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs, idlesBeforeDozing, dozeNanos, idlesBeforeDeepDoze,
            deepDozeNanos, spinNanos, SystemNanoClock.INSTANCE);
    }

    DozingBackoffIdleStrategy(
        final long maxSpins,
        final long maxYields,
        final long minParkPeriodNs,
        final long maxParkPeriodNs,
        final long idlesBeforeDozing,
        final long dozeNanos,
        final long idlesBeforeDeepDoze,
        final long deepDozeNanos,
        final long spinNanos,
        final NanoClock clock)
    {
        this.backoff = new BackoffIdleStrategy(maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs);
        this.idlesBeforeParking = maxSpins + maxYields;
        this.idlesBeforeDozing = idlesBeforeDozing;
        this.dozeNanos = dozeNanos;
        this.idlesBeforeDeepDoze = Math.max(idlesBeforeDozing, idlesBeforeDeepDoze);
        this.deepDozeNanos = deepDozeNanos;
        this.spinNanos = spinNanos;
        this.clock = clock;
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    @Override
    public void idle()
    {
        if (spinning)
        {
            if (clock.nanoTime() - spinUntilNanos < 0)
            {
                Thread.onSpinWait();
                return;
            }
            spinning = false;
        }
        if (doorbell != null && idles >= Math.min(idlesBeforeDoorbell, idlesBeforeDeepDoze) && sleepOnDoorbell())
        {
            if (idles < idlesBeforeDeepDoze)
            {
                idles++;
            }
        }
        else if (idles < idlesBeforeDozing)
        {
            idles++;
            backoff.idle();
        }
        else if (idles < idlesBeforeDeepDoze)
        {
            idles++;
            LockSupport.parkNanos(dozeNanos);
        }
        else
        {
            LockSupport.parkNanos(deepDozeNanos);
        }
    }

    /**
     * @return false when the doorbell would not arm (nothing marked, nothing slept): the caller parks instead.
     */
    private boolean sleepOnDoorbell()
    {
        if (!armed)
        {
            armed = doorbell.arm(); // then one more duty cycle sees what came before the marks were visible
            if (armed)
            {
                marked = true;
            }
            return armed;
        }
        armed = false; // marks a producer cleared must be set again before the next sleep
        doorbell.await(sleepNanos);
        return true;
    }

    @Override
    public void reset()
    {
        if (marked)
        {
            marked = false;
            armed = false;
            doorbell.disarm();
        }
        idles = 0;
        backoff.reset();
        if (spinNanos > 0)
        {
            spinning = true;
            spinUntilNanos = clock.nanoTime() + spinNanos;
        }
    }

    /**
     * Sleep on {@code doorbell}, for at most {@code sleepNanos} at a time, instead of the deeper doze. Before the
     * thread starts.
     *
     * @return this.
     */
    public DozingBackoffIdleStrategy doorbell(final Doorbell doorbell, final long sleepNanos)
    {
        this.doorbell = doorbell;
        this.sleepNanos = sleepNanos;
        return this;
    }

    /**
     * Try the {@link #doorbell(Doorbell, long) doorbell} once {@code idles} idle calls passed without work (say the
     * back-off's spins and yields), not only at the deeper doze. Before the thread starts.
     *
     * @return this.
     */
    public DozingBackoffIdleStrategy sleepOnDoorbellAfter(final long idles)
    {
        this.idlesBeforeDoorbell = idles;
        return this;
    }

    /**
     * @return idle calls without work before the back-off parks (its spins and yields).
     */
    public long idlesBeforeParking()
    {
        return idlesBeforeParking;
    }

    /**
     * @return true once the quiet stretch was long enough to doze.
     */
    public boolean isDozing()
    {
        return idles >= idlesBeforeDozing;
    }

    /**
     * @return true once the quiet stretch was long enough for the deeper doze.
     */
    public boolean isDozingDeeply()
    {
        return idles >= idlesBeforeDeepDoze;
    }

    @Override
    public String alias()
    {
        return "backoff";
    }
}
