package io.xferd.daemon.agent;

import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * For a consumer that should take its work in batches, not as it trickles in: after a duty cycle that did some work
 * but less than a full batch, it naps anyway (and counts the quiet stretch from scratch); only a full batch (it is
 * behind) goes straight on to the next cycle, and a cycle without work idles as the wrapped strategy says.
 * <p>
 * Without it, a thread that resets its back-off on any work never parks while a stream of records arrives faster
 * than one per cycle: the journal's thread, fed two records per request, ran flat out beside the data plane during a
 * stream of small requests, a third busy thread on a two-core host that took turns with the spinning ones.
 */
public final class BatchingIdleStrategy implements IdleStrategy
{
    private final IdleStrategy idle;
    private final int fullBatch;
    private final long napNanos;

    /**
     * @param fullBatch the work count at which the consumer is behind and goes on at once.
     * @param napNanos  the nap after a cycle with some work but less than {@code fullBatch}.
     */
    public BatchingIdleStrategy(final IdleStrategy idle, final int fullBatch, final long napNanos)
    {
        this.idle = idle;
        this.fullBatch = fullBatch;
        this.napNanos = napNanos;
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount <= 0)
        {
            idle.idle();
            return;
        }
        idle.reset();
        if (workCount < fullBatch)
        {
            LockSupport.parkNanos(napNanos);
        }
    }

    @Override
    public void idle()
    {
        idle.idle();
    }

    @Override
    public void reset()
    {
        idle.reset();
    }

    @Override
    public String alias()
    {
        return "batching-" + idle.alias();
    }
}
