package io.xferd.daemon.agent;

/**
 * Operations a polling thread has in flight in the kernel (a transfer worker's file reads and writes in its own
 * io_uring), which its idle strategy can wait for instead of parking. A park ends on its timer only, so a completion
 * that lands early waits for the rest of it (fio, blocked in {@code io_uring_enter}, wakes on the completion); a wait
 * in the kernel ends when one completes. It stays bounded by the park it replaces, so the other work the thread polls
 * for (clients' submit rings, which ring no doorbell while requests are in flight) is found no later than before.
 * Polling thread only.
 */
public interface InFlightWait
{
    /**
     * @return true when something is in flight whose completion ends {@link #await}.
     */
    boolean inFlight();

    /**
     * Block until an operation in flight completes (at once if one has and was not reaped yet) or {@code timeoutNs}
     * pass. Reaps nothing: the next duty cycle does, and counts it as work.
     */
    void await(long timeoutNs);

    /**
     * @return a wait on whichever of {@code waits} alone has something in flight; with several in flight there is no
     * one ring to wait in, and the thread parks as before. {@code waits} itself when there is one.
     */
    static InFlightWait anyOne(final InFlightWait... waits)
    {
        if (waits.length == 1)
        {
            return waits[0];
        }
        return new InFlightWait()
        {
            private InFlightWait busy;

            @Override
            public boolean inFlight()
            {
                busy = null;
                for (final InFlightWait wait : waits)
                {
                    if (wait.inFlight())
                    {
                        if (busy != null)
                        {
                            busy = null;
                            return false;
                        }
                        busy = wait;
                    }
                }
                return busy != null;
            }

            @Override
            public void await(final long timeoutNs)
            {
                if (busy != null)
                {
                    busy.await(timeoutNs);
                }
            }
        };
    }
}
