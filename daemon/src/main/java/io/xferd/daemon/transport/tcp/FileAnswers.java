package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.storage.StorageFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.util.concurrent.locks.LockSupport;

/**
 * One connection's {@link FileAnswer}s: as many READs and WRITEs of file regions as may be in the storage stage or
 * waiting to be answered at once, each with its own aligned buffer of one slice. Buffers are made as the peer's
 * pipeline needs them (a connection serving memory only has none; one whose peer keeps four slices in flight has
 * about four), never more than {@code count}: the memory of a connection is bounded by {@code count * capacity}.
 * Closing waits for requests still in flight, as the kernel reads and writes their buffers until they complete.
 */
final class FileAnswers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(FileAnswers.class);
    static final long CLOSE_WAIT_NANOS = 30_000_000_000L;

    private final int count;
    private final int capacity;
    private final FileBufferBudget budget;
    private Arena arena;
    private final FileAnswer[] free;
    private final FileAnswer[] all;
    private int made;
    private int freeCount;
    // the connection's thread while it waits for any of its answers to complete (answers in any order)
    private volatile Thread waiter;

    /**
     * @param count    answers at most (within the answers a channel holds).
     * @param capacity bytes per buffer: the largest slice served this way.
     * @param budget   the daemon's, shared by all connections.
     */
    FileAnswers(final int count, final int capacity, final FileBufferBudget budget)
    {
        this.count = count;
        this.capacity = capacity;
        this.budget = budget;
        this.all = new FileAnswer[count];
        this.free = new FileAnswer[count];
    }

    int capacity()
    {
        return capacity;
    }

    /**
     * @return how many buffers were made so far (tests, status).
     */
    int made()
    {
        return made;
    }

    /**
     * @return a free answer, or null when all that may be made are queued (send answers to get them back; with
     * {@link #made()} 0, the daemon's budget is spent and none can be had).
     */
    FileAnswer take()
    {
        if (freeCount > 0)
        {
            return free[--freeCount];
        }
        if (made == count || !budget.tryTake(capacity))
        {
            return null;
        }
        if (arena == null)
        {
            arena = Arena.ofShared();
        }
        // once per buffer for the life of the connection, as deep as the peer's pipeline reaches
        final FileAnswer answer = new FileAnswer(arena.allocate(capacity, StorageFile.BLOCK), this);
        all[made++] = answer;
        return answer;
    }

    /**
     * The connection's thread waits (non-null) or stopped waiting (null) for any answer of this pool to complete.
     */
    void waiting(final Thread thread)
    {
        waiter = thread;
    }

    /**
     * An answer of this pool completed (the storage stage's thread): wake the thread waiting for any.
     */
    void completed()
    {
        final Thread thread = waiter;
        if (thread != null)
        {
            LockSupport.unpark(thread);
        }
    }

    void give(final FileAnswer answer)
    {
        answer.region = null;
        free[freeCount++] = answer;
    }

    @Override
    public void close()
    {
        if (arena == null)
        {
            return;
        }
        final long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        for (int i = 0; i < made; i++)
        {
            final FileAnswer answer = all[i];
            while (!answer.isDone() && System.nanoTime() < deadline)
            {
                LockSupport.parkNanos(1_000_000);
            }
            if (!answer.isDone())
            {
                // freeing it could let the kernel touch reused memory: keep it, and say so
                LOG.warn("a storage request did not complete within {} s: its buffers are not freed",
                    CLOSE_WAIT_NANOS / 1_000_000_000L);
                return;
            }
        }
        arena.close();
        arena = null;
        budget.giveBack((long)made * capacity);
        made = 0;
        freeCount = 0;
    }
}
