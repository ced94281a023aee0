package io.xferd.daemon.transport.tcp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes that all peer connections of a daemon may hold together in the buffers of their file READs and WRITEs
 * ({@link FileAnswers}): each connection makes its buffers as its peer's pipeline reaches deeper, and once the daemon's
 * budget is spent a connection goes on with the buffers it has (or, with none, serves files synchronously), so many
 * connections reading files cannot take the host's memory. Taken once per buffer for the life of a connection.
 */
final class FileBufferBudget
{
    private final AtomicLong left;

    FileBufferBudget(final long bytes)
    {
        this.left = new AtomicLong(bytes);
    }

    /**
     * @return true when {@code bytes} were taken from the budget.
     */
    boolean tryTake(final long bytes)
    {
        long current;
        do
        {
            current = left.get();
            if (current < bytes)
            {
                return false;
            }
        }
        while (!left.compareAndSet(current, current - bytes));
        return true;
    }

    void giveBack(final long bytes)
    {
        left.addAndGet(bytes);
    }

    long left()
    {
        return left.get();
    }
}
