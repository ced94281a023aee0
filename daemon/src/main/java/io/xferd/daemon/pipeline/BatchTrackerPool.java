package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * One client's batch trackers, made once (at its first batch) and reused: intake takes one per SUBMIT_BATCH,
 * the thread that ends the batch gives it back. When all are out, intake leaves the client's next batch in its ring
 * until one returns: back-pressure on that client only.
 */
public final class BatchTrackerPool
{
    private final ManyToOneConcurrentArrayQueue<BatchTracker> free;

    BatchTrackerPool(final int size, final ManyToOneConcurrentArrayQueue<BatchTracker> heldEntries)
    {
        free = new ManyToOneConcurrentArrayQueue<>(size);
        for (int i = 0; i < size; i++)
        {
            free.offer(new BatchTracker(free, heldEntries));
        }
    }

    /**
     * @return a free tracker, or null when every one is in flight. Intake thread.
     */
    BatchTracker take()
    {
        return free.poll();
    }

    public int available()
    {
        return free.size();
    }
}
