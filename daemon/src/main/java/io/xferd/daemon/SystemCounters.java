package io.xferd.daemon;

import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The daemon's {@link SystemCounter}s, allocated in the cnc file so that {@code xferd status} reads them live.
 */
public final class SystemCounters implements AutoCloseable
{
    private final AtomicCounter[] counters = new AtomicCounter[SystemCounter.values().length];

    public SystemCounters(final CountersManager countersManager)
    {
        for (final SystemCounter counter : SystemCounter.values())
        {
            counters[counter.ordinal()] = countersManager.newCounter(counter.label(), SystemCounter.TYPE_ID);
            if (counters[counter.ordinal()].id() != counter.id())
            {
                throw new IllegalStateException("system counters must be allocated first");
            }
        }
    }

    public AtomicCounter get(final SystemCounter counter)
    {
        return counters[counter.ordinal()];
    }

    @Override
    public void close()
    {
        for (final AtomicCounter counter : counters)
        {
            counter.close();
        }
    }
}
