package io.xferd.proxy;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One prefill or decode backend: its load (requests and estimated tokens in flight through this proxy) and its
 * health. Touched from every event loop, so the state is atomic; the health decisions take the time as an argument
 * so that they can be tested with a hand-driven clock.
 *
 * <p>Health: a backend is ejected when a request could not reach it (connection refused or broken: no point sending
 * more) or after {@code failuresToEject} failed health probes in a row; an ejected backend comes back on the first
 * successful probe once it has been out for at least {@code minEjectNanos}, so that a backend that answers
 * {@code /health} but breaks its connections does not flap in and out at the probe rate.
 */
public final class Backend
{
    private final BackendAddress address;
    private final BackendRole role;
    private final BackendSource source;
    private final int failuresToEject;
    private final long minEjectNanos;
    private final AtomicInteger outstandingRequests = new AtomicInteger();
    private final AtomicLong outstandingTokens = new AtomicLong();
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private volatile boolean healthy = true;
    private volatile long ejectedAtNanos;
    private volatile String lastFailure = "";

    public Backend(
        final BackendAddress address,
        final BackendRole role,
        final BackendSource source,
        final int failuresToEject,
        final long minEjectNanos)
    {
        if (failuresToEject < 1 || minEjectNanos < 0)
        {
            throw new IllegalArgumentException("failuresToEject must be >= 1 and minEjectNanos >= 0");
        }
        this.address = address;
        this.role = role;
        this.source = source;
        this.failuresToEject = failuresToEject;
        this.minEjectNanos = minEjectNanos;
    }

    public BackendAddress address()
    {
        return address;
    }

    public BackendRole role()
    {
        return role;
    }

    public BackendSource source()
    {
        return source;
    }

    public boolean isHealthy()
    {
        return healthy;
    }

    public int outstandingRequests()
    {
        return outstandingRequests.get();
    }

    public long outstandingTokens()
    {
        return outstandingTokens.get();
    }

    /**
     * @return why it was last ejected or last failed a probe, "" if never.
     */
    public String lastFailure()
    {
        return lastFailure;
    }

    /**
     * Counts a request (and its estimated tokens) as in flight; pair with {@link #release(long)}.
     */
    public void acquire(final long tokens)
    {
        outstandingRequests.incrementAndGet();
        outstandingTokens.addAndGet(tokens);
    }

    public void release(final long tokens)
    {
        outstandingRequests.decrementAndGet();
        outstandingTokens.addAndGet(-tokens);
    }

    /**
     * A request found the backend unreachable (connect refused, connection reset or closed mid-answer): eject now.
     *
     * @return true if this call ejected it (it was healthy).
     */
    public boolean onUnreachable(final String why, final long nowNanos)
    {
        lastFailure = why;
        consecutiveFailures.incrementAndGet();
        return eject(nowNanos);
    }

    /**
     * The result of one health probe.
     *
     * @return true if the backend changed state (ejected or restored).
     */
    public boolean onProbe(final boolean ok, final String why, final long nowNanos)
    {
        if (ok)
        {
            consecutiveFailures.set(0);
            if (!healthy && nowNanos - ejectedAtNanos >= minEjectNanos)
            {
                healthy = true;
                return true;
            }
            return false;
        }
        lastFailure = why;
        if (consecutiveFailures.incrementAndGet() >= failuresToEject)
        {
            return eject(nowNanos);
        }
        return false;
    }

    private boolean eject(final long nowNanos)
    {
        // every failure restarts the minimum time out, so a backend failing its probes stays out
        ejectedAtNanos = nowNanos;
        if (healthy)
        {
            healthy = false;
            return true;
        }
        return false;
    }

    @Override
    public String toString()
    {
        return role.label() + " " + address.url();
    }
}
