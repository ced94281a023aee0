package io.xferd.client;

import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.NanoClock;

/**
 * Whether the daemon is still there, judged at most once per check interval while the client finds nothing on its
 * completion ring: gone when its control socket reached end-of-stream or its heartbeat went stale. Once gone, always
 * gone: every pending task fails with {@link TransferStatus#DAEMON_GONE} and calls throw
 * {@link DaemonGoneException}. The interval runs on the injected clock, so a test decides when a check is due.
 */
final class DaemonLiveness
{
    /**
     * Empty polls of a caller spinning on its completion between two looks at the clock: a clock read is most of
     * an empty poll's cost, and a spinning caller polls every few tens of nanoseconds, so the check interval is
     * still kept to within a few microseconds.
     */
    static final int EMPTY_POLLS_PER_CLOCK_READ = 32;

    private final DaemonProxy proxy;
    private final DaemonHeartbeat heartbeat;
    private final BatchTable batches;
    private final NanoClock clock;
    private final long checkIntervalNs;
    private long nextCheckNs;
    /** Empty polls left before the next look at the clock; 0: look at the next. A hint, so not kept atomic. */
    private int emptyPollsBeforeClockRead;
    private volatile String goneReason;

    DaemonLiveness(final DaemonProxy proxy, final DaemonHeartbeat heartbeat, final BatchTable batches,
        final NanoClock clock, final long checkIntervalNs)
    {
        this.proxy = proxy;
        this.heartbeat = heartbeat;
        this.batches = batches;
        this.clock = clock;
        this.checkIntervalNs = checkIntervalNs;
        this.nextCheckNs = clock.nanoTime();
    }

    /**
     * Look at the socket and the heartbeat when a check is due; allocation-free while the daemon lives.
     *
     * @return true when a check ran.
     */
    boolean checkIfDue()
    {
        final long nowNs = clock.nanoTime();
        if (nowNs - nextCheckNs < 0)
        {
            return false;
        }
        nextCheckNs = nowNs + checkIntervalNs;
        if (goneReason == null)
        {
            if (!proxy.isDaemonConnected())
            {
                markGone("daemon closed the connection");
            }
            else
            {
                final String stale = heartbeat.staleReason();
                if (stale != null)
                {
                    markGone(stale);
                }
            }
        }
        return true;
    }

    /**
     * Call after a poll that found the completion ring empty (holding the poll lock): {@link #checkIfDue} at
     * every {@value #EMPTY_POLLS_PER_CLOCK_READ}th such poll, or at the next one after
     * {@link #checkAtNextEmptyPoll}.
     *
     * @return true when a check ran.
     */
    boolean checkAfterEmptyPoll()
    {
        if (emptyPollsBeforeClockRead > 0)
        {
            emptyPollsBeforeClockRead--;
            return false;
        }
        emptyPollsBeforeClockRead = EMPTY_POLLS_PER_CLOCK_READ - 1;
        return checkIfDue();
    }

    /**
     * Make the next empty poll look at the clock: for a caller that idles (yields, parks, sleeps) between its polls,
     * so that its polls are too far apart to count off.
     */
    void checkAtNextEmptyPoll()
    {
        emptyPollsBeforeClockRead = 0;
    }

    /**
     * Count the daemon gone for {@code reason} (the first reason sticks) and fail every pending task.
     */
    void markGone(final String reason)
    {
        if (goneReason == null)
        {
            goneReason = reason;
            batches.failAllPending(TransferStatus.DAEMON_GONE);
        }
    }

    boolean isGone()
    {
        return goneReason != null;
    }

    /**
     * @throws DaemonGoneException with the reason, once the daemon is gone.
     */
    void checkAlive()
    {
        final String reason = goneReason;
        if (reason != null)
        {
            throw new DaemonGoneException(reason);
        }
    }
}
