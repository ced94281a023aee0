package io.xferd.daemon.agent;

import org.agrona.concurrent.Agent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Wraps a data-plane agent and counts its duty cycles (one opaque store per cycle, single writer), so that the
 * conductor can tell a live data plane from a stuck one: the systemd watchdog is fed only while every data-plane
 * thread's count moves.
 */
public final class DutyCycleTracker implements Agent
{
    private static final VarHandle CYCLES;

    static
    {
        try
        {
            CYCLES = MethodHandles.lookup().findVarHandle(DutyCycleTracker.class, "cycles", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Agent agent;
    @SuppressWarnings("unused")
    private long cycles;

    public DutyCycleTracker(final Agent agent)
    {
        this.agent = agent;
    }

    @Override
    public void onStart()
    {
        agent.onStart();
    }

    @Override
    public int doWork() throws Exception
    {
        CYCLES.setOpaque(this, (long)CYCLES.getOpaque(this) + 1);
        return agent.doWork();
    }

    @Override
    public void onClose()
    {
        agent.onClose();
    }

    /**
     * @return duty cycles so far; any thread.
     */
    public long cycles()
    {
        return (long)CYCLES.getOpaque(this);
    }

    @Override
    public String roleName()
    {
        return agent.roleName();
    }
}
