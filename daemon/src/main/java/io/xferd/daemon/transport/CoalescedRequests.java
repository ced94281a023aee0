package io.xferd.daemon.transport;

import io.xferd.daemon.session.BatchTracker;

import java.util.Arrays;

/**
 * The client requests that one transfer carries when intake merged adjacent requests (contiguous local and target
 * ranges, one client, one segment, one opcode, one trace id) into a single slice stream. Each member is still
 * answered on its own, with its own id, batch entry and length, once every byte of the merged transfer arrived; a
 * failure fails every member. Empty ({@link #count()} 0) for a transfer of one request, which answers with its own
 * fields. Reused; not thread-safe (one owner at a time: intake, then a worker, then the transport).
 * <p>
 * Its arrays grow on demand ({@link #FIRST_CAPACITY}, then doubling up to {@link #MAX_MEMBERS}) and are kept: every
 * pipeline slot and pooled remote transfer holds one, and most never carry a merge, so arrays for 64 members in
 * each were ~3 KB times ~20K objects (~54 MB of a fresh daemon's heap). A list allocates only when it carries more
 * members than it ever did, at most four times in its life; after that it is allocation-free.
 */
public final class CoalescedRequests
{
    /** The most requests one transfer carries. */
    public static final int MAX_MEMBERS = 64;
    /** The capacity of the first arrays, made by the first merge this list carries. */
    public static final int FIRST_CAPACITY = 8;

    private static final long[] NO_LONGS = new long[0];
    private static final int[] NO_INTS = new int[0];
    private static final BatchTracker[] NO_BATCHES = new BatchTracker[0];

    private long[] requestIds = NO_LONGS;
    private BatchTracker[] batches = NO_BATCHES;
    private int[] batchEntries = NO_INTS;
    private long[] lengths = NO_LONGS;
    private long[] submitNanos = NO_LONGS;
    private long[] intakeNanos = NO_LONGS;
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
        if (count == requestIds.length)
        {
            grow(count + 1);
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

    /**
     * @return how many members this list holds without allocating (0 until it carries a merge).
     */
    public int capacity()
    {
        return requestIds.length;
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
        if (n > requestIds.length)
        {
            grow(n);
        }
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

    private void grow(final int needed)
    {
        int capacity = Math.max(FIRST_CAPACITY, requestIds.length);
        while (capacity < needed)
        {
            capacity <<= 1;
        }
        capacity = Math.min(capacity, MAX_MEMBERS);
        requestIds = Arrays.copyOf(requestIds, capacity);
        batches = Arrays.copyOf(batches, capacity);
        batchEntries = Arrays.copyOf(batchEntries, capacity);
        lengths = Arrays.copyOf(lengths, capacity);
        submitNanos = Arrays.copyOf(submitNanos, capacity);
        intakeNanos = Arrays.copyOf(intakeNanos, capacity);
    }
}
