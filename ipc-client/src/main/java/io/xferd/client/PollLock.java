package io.xferd.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Lets one thread at a time read the completion ring, and none once it is closed (the ring is then unmapped). A
 * poll costs one CAS to enter and a release store to leave: a {@code ReentrantLock}'s unlock is a volatile store,
 * a full fence on x86, paid on every poll of a caller spinning on its completion. Not reentrant; a thread that does
 * not get in takes nothing instead of waiting (another thread is taking the records).
 */
final class PollLock
{
    private static final int FREE = 0;
    private static final int HELD = 1;
    private static final int CLOSED = 2;
    private static final VarHandle STATE;

    static
    {
        try
        {
            STATE = MethodHandles.lookup().findVarHandle(PollLock.class, "state", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    @SuppressWarnings("unused") // through STATE
    private volatile int state = FREE;

    /**
     * @return true when this thread now holds the lock; false while another holds it or once closed.
     */
    boolean tryLock()
    {
        return STATE.compareAndSet(this, FREE, HELD);
    }

    /**
     * Leave; only the holder calls it.
     */
    void unlock()
    {
        STATE.setRelease(this, FREE);
    }

    /**
     * Close once no thread holds the lock (waiting for the holder to leave: a poll is short); nobody gets in after.
     */
    void close()
    {
        while (true)
        {
            final int current = (int)STATE.getVolatile(this);
            if (current == CLOSED || (current == FREE && STATE.compareAndSet(this, FREE, CLOSED)))
            {
                return;
            }
            Thread.yield();
        }
    }

    /**
     * Close if no thread holds the lock.
     *
     * @return true once closed (now or before); false while a holder is inside.
     */
    boolean tryClose()
    {
        final int current = (int)STATE.getVolatile(this);
        return current == CLOSED || (current == FREE && STATE.compareAndSet(this, FREE, CLOSED));
    }

    boolean isClosed()
    {
        return (int)STATE.getVolatile(this) == CLOSED;
    }
}
