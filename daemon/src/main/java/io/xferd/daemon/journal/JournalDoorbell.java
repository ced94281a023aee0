package io.xferd.daemon.journal;

import io.xferd.daemon.agent.Doorbell;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.util.concurrent.locks.LockSupport;

/**
 * Lets the journal's thread sleep long once nothing has been recorded for a while, and the first record after that
 * wake it: the thread marks itself asleep, drains once more, then parks; a recorder that finds the mark after its
 * record clears it and unparks the thread. A record claimed before the mark was visible is seen by the tail check
 * before the park (a claim's compare-and-set on the tail orders it before the recorder reads the mark). Costs a
 * recorder one volatile load per record while the thread is awake.
 */
final class JournalDoorbell implements Doorbell
{
    private final ManyToOneRingBuffer ring;
    private volatile Thread sleeper;
    private volatile boolean asleep;

    JournalDoorbell(final ManyToOneRingBuffer ring)
    {
        this.ring = ring;
    }

    /**
     * A recorder calls this after each record it claimed (or failed to claim); any thread.
     */
    void ringIfAsleep()
    {
        if (asleep)
        {
            asleep = false;
            LockSupport.unpark(sleeper);
        }
    }

    @Override
    public boolean arm()
    {
        if (sleeper == null)
        {
            sleeper = Thread.currentThread();
        }
        asleep = true; // a volatile store: the fence before the tail is read again
        return true;
    }

    @Override
    public void await(final long timeoutNs)
    {
        if (asleep && ring.producerPosition() == ring.consumerPosition())
        {
            LockSupport.parkNanos(this, timeoutNs); // an unpark that came first makes it return at once
        }
    }

    @Override
    public void disarm()
    {
        asleep = false;
    }
}
