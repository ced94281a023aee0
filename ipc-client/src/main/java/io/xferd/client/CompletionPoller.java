package io.xferd.client;

import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.NotificationFlyweight;
import io.xferd.ipc.RecordTypes;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.ringbuffer.RingBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Takes what the daemon wrote on this client's completion ring: a completion finishes its task in the
 * {@link BatchTable}, a notification is queued for {@link #takeNotifications}. When the ring is empty it lets
 * {@link DaemonLiveness} check the daemon (looking at the clock every few empty polls of a spinning caller, at each
 * one of a waiter that idles between them), so that a caller waiting on completions notices a daemon that went away.
 * Allocation-free but for notifications; one thread polls at a time (another that tries meanwhile takes nothing).
 * <p>
 * With a {@link DoorbellIdleStrategy} the waits sleep on the ring's {@link CompletionDoorbell} once their spins,
 * yields and parks are spent; the sleeper holds the poll lock (nobody can take its records meanwhile, and the ring cannot be
 * unmapped under it), so other waiting threads park briefly instead.
 */
final class CompletionPoller
{
    /** Records taken per poll at most, so that one poll stays short however busy the daemon is. */
    static final int RECORDS_PER_POLL = 256;

    private final RingBuffer completionRing;
    private final BatchTable batches;
    private final DaemonLiveness liveness;
    private final NanoClock clock;
    private final IdleStrategy idle;
    /** The caller's strategy when it sleeps on the doorbell; null for any other strategy. */
    private final DoorbellIdleStrategy doorbellIdle;
    private final CompletionDoorbell doorbell;
    /**
     * Polls that took records, so far: a waiter that read it before looking at its batch sleeps only if no poll took
     * records since (another thread may have finished its batch). Written under the poll lock.
     */
    private final AtomicInteger recordPolls = new AtomicInteger();
    private final PollLock pollLock = new PollLock();
    private final CompletionFlyweight completion = new CompletionFlyweight();
    private final NotificationFlyweight notification = new NotificationFlyweight();
    private final MessageHandler recordHandler = this::onRecord;
    private final List<Notification> notifications = new ArrayList<>();
    /** The time of this poll's completions: read at the first one, shared by the rest (one clock read per poll). */
    private long pollNanos;
    private boolean pollClockRead;

    CompletionPoller(final RingBuffer completionRing, final BatchTable batches, final DaemonLiveness liveness,
        final NanoClock clock, final IdleStrategy idle)
    {
        this.completionRing = completionRing;
        this.batches = batches;
        this.liveness = liveness;
        this.clock = clock;
        this.idle = idle;
        this.doorbellIdle = idle instanceof DoorbellIdleStrategy doorbellStrategy ? doorbellStrategy : null;
        this.doorbell = new CompletionDoorbell(completionRing.buffer());
    }

    /**
     * @return records taken.
     */
    int poll()
    {
        if (!pollLock.tryLock())
        {
            return 0;
        }
        try
        {
            pollClockRead = false;
            final int work = completionRing.read(recordHandler, RECORDS_PER_POLL);
            if (work == 0)
            {
                liveness.checkAfterEmptyPoll();
            }
            else
            {
                recordPolls.setRelease(recordPolls.getPlain() + 1);
            }
            return work;
        }
        finally
        {
            pollLock.unlock();
        }
    }

    /**
     * Wait until every submitted task of the batch finished. The timeout restarts whenever a record arrives: it
     * bounds a stall, not the batch.
     *
     * @return true when all completed OK.
     * @throws DaemonGoneException when the daemon goes away meanwhile.
     * @throws XferException       when nothing arrives for {@code timeoutMs}.
     */
    boolean awaitBatch(final long batchId, final long timeoutMs)
    {
        final BatchTable.Batch batch = batches.batch(batchId);
        final long timeoutNs = timeoutMs * 1_000_000L;
        long deadline = clock.nanoTime() + timeoutNs;
        idle.reset();
        while (true)
        {
            final int polls = recordPolls.getAcquire();
            if (batch.pending <= 0)
            {
                break;
            }
            final int work = poll();
            if (work > 0)
            {
                deadline = clock.nanoTime() + timeoutNs;
            }
            else
            {
                checkOpen();
                liveness.checkAlive();
                liveness.checkAtNextEmptyPoll(); // it idles before the next poll: the countdown is for spinners
                if (clock.nanoTime() - deadline > 0)
                {
                    throw new XferException("batch " + batchId + ": " + batch.pending +
                        " task(s) without completion for " + timeoutMs + " ms");
                }
            }
            idle(work, polls, deadline);
        }
        liveness.checkAlive();
        for (int task = 0; task < batch.submitted; task++)
        {
            if (batch.state[task] != TaskStatus.COMPLETED)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Wait until at least one of the first {@code count} batches has no task pending: a caller keeping several
     * batches in flight refills whichever finished first, as io_uring's callers do, instead of waiting on the
     * oldest while younger ones already finished. The timeout restarts whenever a record arrives.
     *
     * @return the index in {@code batchIds} of a finished batch (the lowest such index).
     * @throws DaemonGoneException when the daemon goes away meanwhile.
     * @throws XferException       when nothing arrives for {@code timeoutMs}.
     */
    int awaitAnyBatch(final long[] batchIds, final int count, final long timeoutMs)
    {
        if (count <= 0 || count > batchIds.length)
        {
            throw new IllegalArgumentException("count " + count + " outside 1.." + batchIds.length);
        }
        final long timeoutNs = timeoutMs * 1_000_000L;
        long deadline = clock.nanoTime() + timeoutNs;
        idle.reset();
        while (true)
        {
            final int polls = recordPolls.getAcquire();
            for (int i = 0; i < count; i++)
            {
                if (batches.batch(batchIds[i]).pending == 0)
                {
                    liveness.checkAlive();
                    return i;
                }
            }
            final int work = poll();
            if (work > 0)
            {
                deadline = clock.nanoTime() + timeoutNs;
            }
            else
            {
                checkOpen();
                liveness.checkAlive();
                liveness.checkAtNextEmptyPoll();
                if (clock.nanoTime() - deadline > 0)
                {
                    throw new XferException(count + " batches without a completion for " + timeoutMs + " ms");
                }
            }
            idle(work, polls, deadline);
        }
    }

    /**
     * @return a token to pass to {@link #idle(int, int, long)}: read it before looking at what the wait waits for.
     */
    int recordPolls()
    {
        return recordPolls.getAcquire();
    }

    /**
     * One idle step of a wait for completions that found nothing: the caller's strategy, or with a
     * {@link DoorbellIdleStrategy}, once its spins and yields are spent, a bounded sleep on the doorbell.
     *
     * @param polls    {@link #recordPolls()} as it was before the caller looked at what it waits for.
     * @param deadline the wait's timeout on this poller's clock: no sleep lasts past it.
     */
    void idle(final int work, final int polls, final long deadline)
    {
        if (doorbellIdle == null)
        {
            idle.idle(work);
        }
        else if (doorbellIdle.backOff(work))
        {
            // the wait's own timeout bounds the sleep, whatever the strategy's longest
            sleepOnDoorbell(polls, Math.max(1, Math.min(doorbellIdle.maxSleepNs(), deadline - clock.nanoTime())));
        }
    }

    private void sleepOnDoorbell(final int polls, final long maxSleepNs)
    {
        if (!pollLock.tryLock())
        {
            // another thread polls or sleeps (it takes what arrives), or the poller closed
            LockSupport.parkNanos(Math.min(DoorbellIdleStrategy.PARK_NS, maxSleepNs));
            return;
        }
        try
        {
            if (recordPolls.getPlain() != polls)
            {
                return; // another thread took records since the caller looked: look again
            }
            doorbell.arm();
            try
            {
                // a record committed before the mark was visible is seen now (its claim moved the tail); one
                // committed after it rings
                if (completionRing.producerPosition() == completionRing.consumerPosition())
                {
                    doorbell.sleep(maxSleepNs);
                }
                else
                {
                    Thread.yield(); // claimed, not yet committed: the daemon's thread may need this core to finish
                }
            }
            finally
            {
                doorbell.disarm();
            }
        }
        finally
        {
            pollLock.unlock();
        }
    }

    /**
     * @return the notifications received since the last call, oldest first.
     */
    List<Notification> takeNotifications()
    {
        synchronized (notifications)
        {
            final List<Notification> taken = new ArrayList<>(notifications);
            notifications.clear();
            return taken;
        }
    }

    /**
     * Stop reading the ring, once no poll is in progress: it is about to be unmapped.
     */
    void close()
    {
        // a thread asleep on the word holds the poll lock; one that took the lock but had not marked the word yet
        // when the first wake went out sleeps after it: wake again until the lock is free
        while (!pollLock.tryClose())
        {
            doorbell.wakeSleeper();
            Thread.yield();
        }
    }

    /**
     * Fail a wait of a closed client (its rings are unmapped: nothing will arrive, and nothing may be touched).
     */
    void checkOpen()
    {
        if (pollLock.isClosed())
        {
            throw new IllegalStateException("the client is closed");
        }
    }

    private void onRecord(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (type == RecordTypes.COMPLETION)
        {
            completion.wrap(buffer, index);
            if (!pollClockRead)
            {
                pollNanos = clock.nanoTime();
                pollClockRead = true;
            }
            batches.complete(completion.requestId(), completion.status(), completion.bytesTransferred(), pollNanos);
        }
        else if (type == RecordTypes.NOTIFICATION)
        {
            notification.wrap(buffer, index);
            synchronized (notifications)
            {
                notifications.add(new Notification(notification.sourceName(), notification.message(),
                    notification.traceId()));
            }
        }
    }
}
