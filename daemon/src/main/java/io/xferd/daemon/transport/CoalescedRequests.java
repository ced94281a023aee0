package io.xferd.daemon.transport;

import io.xferd.daemon.session.BatchTracker;

/**
 * The client requests that one transfer carries when intake merged adjacent requests (contiguous local and target
 * ranges, one client, one segment, one opcode, one trace id) into a single slice stream. Each member is still
 * answered on its own, with its own id, batch entry and length, once every byte of the merged transfer arrived; a
 * failure fails every member. Empty ({@link #count()} 0) for a transfer of one request, which answers with its own
 * fields. Pre-allocated and reused; not thread-safe (one owner at a time: intake, then a worker, then the transport).
 */
public final class CoalescedRequests
{
    /** The most requests one transfer carries. */
    public static final int MAX_MEMBERS = 64;

    private final long[] requestIds = new long[MAX_MEMBERS];
    private final BatchTracker[] batches = new BatchTracker[MAX_MEMBERS];
    private final int[] batchEntries = new int[MAX_MEMBERS];
    private final long[] lengths = new long[MAX_MEMBERS];
    private final long[] submitNanos = new long[MAX_MEMBERS];
    private final long[] intakeNanos = new long[MAX_MEMBERS];
    private int count;

    /**
     * @return false when full (the request is not added).
     */
    public boolean add(final long requestId, final BatchTracker batch, final int batchEntry, final long length,
        final long submitNanos, final long intakeNanos)
    {
        if (count == MAX_MEMBERS)
        {
            return false;
        }
        requestIds[count] = requestId;
        batches[count] = batch;
        batchEntries[count] = batchEntry;
        lengths[count] = length;
        this.submitNanos[count] = submitNanos;
        this.intakeNanos[count] = intakeNanos;
        count++;
        return true;
    }

    public boolean isFull()
    {
        return count == MAX_MEMBERS;
    }

    /**
     * @return the requests carried, or 0 for a transfer of one request (not coalesced).
     */
    public int count()
    {
        return count;
    }

    public long requestId(final int member)
    {
        return requestIds[member];
    }

    /**
     * @return the SUBMIT_BATCH the member is an entry of, or null for a SUBMIT.
     */
    public BatchTracker batch(final int member)
    {
        return batches[member];
    }

    public int batchEntry(final int member)
    {
        return batchEntries[member];
    }

    public long length(final int member)
    {
        return lengths[member];
    }

    public long submitNanos(final int member)
    {
        return submitNanos[member];
    }

    public long intakeNanos(final int member)
    {
        return intakeNanos[member];
    }

    /**
     * Replace this list with a copy of {@code other}'s members.
     */
    public void copyFrom(final CoalescedRequests other)
    {
        clear();
        final int n = other.count;
        System.arraycopy(other.requestIds, 0, requestIds, 0, n);
        System.arraycopy(other.batches, 0, batches, 0, n);
        System.arraycopy(other.batchEntries, 0, batchEntries, 0, n);
        System.arraycopy(other.lengths, 0, lengths, 0, n);
        System.arraycopy(other.submitNanos, 0, submitNanos, 0, n);
        System.arraycopy(other.intakeNanos, 0, intakeNanos, 0, n);
        count = n;
    }

    /**
     * Forget every member (and the batch trackers they referred to).
     */
    public void clear()
    {
        for (int i = 0; i < count; i++)
        {
            batches[i] = null;
        }
        count = 0;
    }
}
