package io.xferd.daemon.session;

import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One SUBMIT_BATCH while its entries are in flight: counts the entries still out, keeps the lowest-index failure and
 * the bytes moved, and holds the notify until every entry landed. Pre-allocated per client (a pool of them is part
 * of its session) and reused: nothing is allocated per batch. Entries finish on any thread (transfer workers,
 * transport threads); the one that finishes the last sends the batch's single completion.
 * <p>
 * A WRITE batch with a notify to another daemon's segment holds back its last entry: the notify travels with that
 * entry, which goes only once every other entry landed, so the remote owner never hears of bytes not yet there.
 */
public final class BatchTracker
{
    /** {@link #entryDone} result: entries are still out. */
    public static final int PENDING = 0;
    /** {@link #entryDone} result: the batch is over, send its completion. */
    public static final int FINISHED = 1;
    /** {@link #entryDone} result: every entry but the held-back last one landed: send that one now. */
    public static final int RELEASE_HELD = 2;
    /**
     * {@link #entryDone} result: the batch is over, an entry failed, and its held-back last entry never goes (nor the
     * notify with it): it was counted submitted with its batch, so it counts failed now.
     */
    public static final int FINISHED_WITHOUT_HELD = 3;

    private static final long NO_FAILURE = Long.MAX_VALUE;

    private final ManyToOneConcurrentArrayQueue<BatchTracker> pool;
    private final ManyToOneConcurrentArrayQueue<BatchTracker> heldEntries;
    private final AtomicInteger remaining = new AtomicInteger();
    private final AtomicLong failure = new AtomicLong(NO_FAILURE);
    private final AtomicLong bytes = new AtomicLong();
    public final UnsafeBuffer notify = new UnsafeBuffer(new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH]);

    public ClientSession submitter;
    /** The local target's session when the target is on this daemon, for the notify; else null. */
    public ClientSession localTarget;
    public long requestId;
    public int opcode;
    public int entryCount;
    public long segmentHandle;
    public long traceId;
    public long submitNanos;
    public long intakeNanos;
    long totalLength;
    public int notifyLength;
    public boolean holdsBackLast;
    public long heldLocalAddress;
    public long heldTargetAddress;
    public long heldLength;
    /** Intake only: the next entry to publish and where the entries start in the record's body. */
    public int nextEntry;
    public int entriesOffset;

    /**
     * @param pool        the free list this tracker returns to when its batch is over.
     * @param heldEntries where a batch whose held-back last entry may go now waits for intake to publish it
     *                    (intake is the pipeline's only producer); sized for every tracker of every client.
     */
    public BatchTracker(
        final ManyToOneConcurrentArrayQueue<BatchTracker> pool,
        final ManyToOneConcurrentArrayQueue<BatchTracker> heldEntries)
    {
        this.pool = pool;
        this.heldEntries = heldEntries;
    }

    /**
     * Start a batch of {@code entryCount} entries. Intake thread, before any entry is published.
     */
    public void begin(final ClientSession submitter, final long requestId, final int opcode, final int entryCount,
        final long segmentHandle, final long traceId, final long submitNanos, final long intakeNanos)
    {
        this.submitter = submitter;
        this.requestId = requestId;
        this.opcode = opcode;
        this.entryCount = entryCount;
        this.segmentHandle = segmentHandle;
        this.traceId = traceId;
        this.submitNanos = submitNanos;
        this.intakeNanos = intakeNanos;
        this.localTarget = null;
        this.totalLength = 0;
        this.notifyLength = 0;
        this.holdsBackLast = false;
        this.nextEntry = 0;
        failure.set(NO_FAILURE);
        bytes.set(0);
        remaining.set(entryCount);
    }

    /**
     * Record one entry's end. Any thread.
     *
     * @return {@link #PENDING}, {@link #FINISHED}, {@link #FINISHED_WITHOUT_HELD} or {@link #RELEASE_HELD}.
     */
    public int entryDone(final int entry, final int status, final long entryBytes)
    {
        if (status != TransferStatus.OK)
        {
            final long packed = ((long)entry << 32) | (status & 0xFFFF_FFFFL);
            long current;
            while (packed < (current = failure.get()) && !failure.compareAndSet(current, packed))
            {
                Thread.onSpinWait();
            }
        }
        else
        {
            bytes.getAndAdd(entryBytes);
        }
        final int left = remaining.decrementAndGet();
        if (left == 0)
        {
            return FINISHED;
        }
        if (left == 1 && holdsBackLast)
        {
            if (failure.get() != NO_FAILURE)
            {
                return FINISHED_WITHOUT_HELD; // the held entry never goes, and the notify with it
            }
            return RELEASE_HELD;
        }
        return PENDING;
    }

    /**
     * Record the end of {@code count} entries at once (a worker's run of them). Any thread.
     *
     * @param failedEntry  the lowest index among them that failed, with {@code failedStatus}; ignored when none did.
     * @param failedStatus OK when every one of them moved all its bytes.
     * @param movedBytes   the bytes the entries that did not fail moved.
     * @return {@link #PENDING}, {@link #FINISHED}, {@link #FINISHED_WITHOUT_HELD} or {@link #RELEASE_HELD}, as
     * {@link #entryDone}.
     */
    public int entriesDone(final int count, final int failedEntry, final int failedStatus, final long movedBytes)
    {
        if (failedStatus != TransferStatus.OK)
        {
            final long packed = ((long)failedEntry << 32) | (failedStatus & 0xFFFF_FFFFL);
            long current;
            while (packed < (current = failure.get()) && !failure.compareAndSet(current, packed))
            {
                Thread.onSpinWait();
            }
        }
        if (movedBytes != 0)
        {
            bytes.getAndAdd(movedBytes);
        }
        final int left = remaining.addAndGet(-count);
        if (left == 0)
        {
            return FINISHED;
        }
        if (left == 1 && holdsBackLast)
        {
            return failure.get() != NO_FAILURE ? FINISHED_WITHOUT_HELD : RELEASE_HELD;
        }
        return PENDING;
    }

    /**
     * @return OK when every entry completed OK, else the status of the lowest-index entry that failed.
     */
    public int status()
    {
        final long packed = failure.get();
        return packed == NO_FAILURE ? TransferStatus.OK : (int)packed;
    }

    /**
     * @return the bytes the batch moved: the sum of its lengths when OK, else 0.
     */
    public long bytesTransferred()
    {
        return status() == TransferStatus.OK ? bytes.get() : 0;
    }

    /**
     * Hand the held-back last entry to intake. Any thread.
     */
    public void releaseHeld()
    {
        while (!heldEntries.offer(this))
        {
            Thread.onSpinWait(); // cannot stay full: it has room for every tracker there is
        }
    }

    /**
     * Back to its session's pool; the batch's fields are stale from here on.
     */
    public void recycle()
    {
        submitter = null;
        localTarget = null;
        pool.offer(this);
    }

    public long requestId()
    {
        return requestId;
    }
}
