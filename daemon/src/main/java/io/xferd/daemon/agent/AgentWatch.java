package io.xferd.daemon.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The daemon's long-lived threads (data plane agents, journal, peer acceptors), looked at by the conductor thread:
 * one that ended while the daemon runs (an Error escaped its loop, it was interrupted) means requests will hang with
 * a fresh heartbeat, so the daemon stops and exits non-zero for its supervisor to restart it, instead of holding its
 * directory with a dead data plane. Checked at most every {@code periodMs}, on an injected clock.
 */
public final class AgentWatch
{
    private record Watched(String name, Supplier<Thread> thread)
    {
    }

    private final List<Watched> watched = new ArrayList<>();
    private final long periodMs;
    private long nextCheckMs;

    public AgentWatch(final long periodMs)
    {
        this.periodMs = periodMs;
    }

    /**
     * @param thread the thread, once started (null until then, and null for a part that does not run).
     */
    public void watch(final String name, final Supplier<Thread> thread)
    {
        watched.add(new Watched(name, thread));
    }

    /**
     * @throws AgentDiedException when a watched thread has ended.
     */
    public void check(final long nowMs)
    {
        if (nowMs < nextCheckMs)
        {
            return;
        }
        nextCheckMs = nowMs + periodMs;
        for (int i = 0, size = watched.size(); i < size; i++)
        {
            final Watched one = watched.get(i);
            final Thread thread = one.thread.get();
            if (thread != null && thread.getState() == Thread.State.TERMINATED)
            {
                throw new AgentDiedException(one.name, thread.getName());
            }
        }
    }

    /**
     * A daemon thread ended while the daemon was running.
     */
    public static final class AgentDiedException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        AgentDiedException(final String name, final String threadName)
        {
            super("the " + name + " thread (" + threadName + ") died: the daemon stops (exit code 70)");
        }
    }
}
