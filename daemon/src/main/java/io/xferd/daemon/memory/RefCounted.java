package io.xferd.daemon.memory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Something the data plane borrows and the conductor frees: a mapping must not be unmapped while a transfer
 * copies through it. Lock-free: the top bit marks "closed", the rest counts borrowers; once closed, no new
 * borrower gets in, and the owner frees it when the count reaches zero.
 */
public abstract class RefCounted
{
    private static final long CLOSED = Long.MIN_VALUE;

    private final AtomicLong state = new AtomicLong();

    /**
     * @return true when borrowed; false once closed.
     */
    public final boolean tryAcquire()
    {
        return tryAcquire(1);
    }

    /**
     * Borrow {@code count} times in one atomic step (each borrow is given back by its own {@link #release()}).
     *
     * @return true when borrowed; false once closed.
     */
    public final boolean tryAcquire(final long count)
    {
        while (true)
        {
            final long current = state.get();
            if ((current & CLOSED) != 0)
            {
                return false;
            }
            if (state.compareAndSet(current, current + count))
            {
                return true;
            }
        }
    }

    public final void release()
    {
        state.decrementAndGet();
    }

    /**
     * Stop new borrowers; existing ones finish.
     */
    public final void markClosed()
    {
        while (true)
        {
            final long current = state.get();
            if ((current & CLOSED) != 0 || state.compareAndSet(current, current | CLOSED))
            {
                return;
            }
        }
    }

    public final boolean isClosed()
    {
        return (state.get() & CLOSED) != 0;
    }

    /**
     * @return true when closed and no borrower is left, so the resource can be freed.
     */
    public final boolean isReclaimable()
    {
        return state.get() == CLOSED;
    }
}
