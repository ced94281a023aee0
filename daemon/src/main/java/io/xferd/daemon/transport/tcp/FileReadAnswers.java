package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.storage.StorageFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;

/**
 * One connection's {@link FileReadAnswer}s: as many READs of file regions as may be read ahead at once, each with
 * its own aligned buffer of one slice, made on the first such READ (a connection serving memory only has none).
 * Closing waits for reads still in flight, as the kernel writes into their buffers until they complete.
 */
final class FileReadAnswers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(FileReadAnswers.class);
    private static final long CLOSE_WAIT_NANOS = 30_000_000_000L;

    private final int count;
    private final int capacity;
    private Arena arena;
    private FileReadAnswer[] free;
    private FileReadAnswer[] all;
    private int freeCount;

    /**
     * @param count    reads in flight at most (the storage queue depth, within the answers a channel holds).
     * @param capacity bytes per buffer: the largest slice served this way.
     */
    FileReadAnswers(final int count, final int capacity)
    {
        this.count = count;
        this.capacity = capacity;
    }

    int capacity()
    {
        return capacity;
    }

    /**
     * @return a free answer, or null when all are queued (flush the channel to get them back).
     */
    FileReadAnswer take()
    {
        if (all == null)
        {
            arena = Arena.ofShared();
            all = new FileReadAnswer[count];
            free = new FileReadAnswer[count];
            for (int i = 0; i < count; i++)
            {
                all[i] = new FileReadAnswer(arena.allocate(capacity, StorageFile.BLOCK));
                free[i] = all[i];
            }
            freeCount = count;
        }
        return freeCount == 0 ? null : free[--freeCount];
    }

    void give(final FileReadAnswer answer)
    {
        answer.region = null;
        free[freeCount++] = answer;
    }

    @Override
    public void close()
    {
        if (all == null)
        {
            return;
        }
        final long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        for (final FileReadAnswer answer : all)
        {
            while (!answer.isDone() && System.nanoTime() < deadline)
            {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            if (!answer.isDone())
            {
                // freeing it could let the kernel write into reused memory: keep it, and say so
                LOG.warn("a storage read did not complete within {} s: its buffers are not freed",
                    CLOSE_WAIT_NANOS / 1_000_000_000L);
                return;
            }
        }
        arena.close();
        arena = null;
        all = null;
    }
}
