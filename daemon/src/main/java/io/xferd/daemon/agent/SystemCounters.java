package io.xferd.daemon.agent;

import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * The daemon's {@link SystemCounter}s, allocated in the cnc file so that {@code xferd status} reads them live.
 */
public final class SystemCounters implements AutoCloseable
{
    private final AtomicCounter[] counters = new AtomicCounter[SystemCounter.values().length];
    private final CountersManager countersManager;

    public SystemCounters(final CountersManager countersManager)
    {
        this.countersManager = countersManager;
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

    /**
     * @return every counter allocated, system and further ones, for readers (metrics) that list them by type.
     */
    public CountersReader reader()
    {
        return countersManager;
    }

    /**
     * A further counter (per peer path, per NIC), from any control-path thread.
     */
    public AtomicCounter newCounter(final String label, final int typeId)
    {
        synchronized (countersManager)
        {
            return new SynchronizedFree(countersManager, countersManager.allocate(label, typeId));
        }
    }

    /**
     * A counter whose freeing takes the same lock as allocation.
     */
    private static final class SynchronizedFree extends AtomicCounter
    {
        private final CountersManager manager;

        SynchronizedFree(final CountersManager manager, final int id)
        {
            super(manager.valuesBuffer(), id);
            this.manager = manager;
        }

        @Override
        public void close()
        {
            if (!isClosed())
            {
                super.close();
                synchronized (manager)
                {
                    manager.free(id());
                }
            }
        }
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
