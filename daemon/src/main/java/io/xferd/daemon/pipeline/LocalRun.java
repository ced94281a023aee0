package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;

/**
 * The small local requests one pipeline command carries when intake gathered them into a run: requests of one client
 * to one segment of this daemon, one opcode, no notify, each at most {@link #MAX_MEMBER_LENGTH} bytes, read from the
 * client's ring in one pass. They cross the pipeline as one event (one claim, one publish, one poll, one borrow of
 * the client), and the worker checks and copies each on its own (every bound, grant and region as for a lone
 * request) and answers them together: a SUBMIT with its own completion, the entries of a SUBMIT_BATCH with one count
 * into their batch. Empty ({@link #count()} 0) for a command of one request, which answers with its own fields.
 * Pre-allocated in its command and reused; one owner at a time (intake, then a worker).
 */
final class LocalRun
{
    /** The most requests one command carries. */
    static final int MAX_MEMBERS = 64;
    /** Requests longer than this go alone: their copy is the cost, and their completion should not wait on others. */
    static final long MAX_MEMBER_LENGTH = 64 * 1024;
    /** The most bytes a run moves before its first completion is written. */
    static final long MAX_RUN_BYTES = 1024 * 1024;

    private final long[] requestIds = new long[MAX_MEMBERS];
    private final BatchTracker[] batches = new BatchTracker[MAX_MEMBERS];
    private final int[] batchEntries = new int[MAX_MEMBERS];
    private final long[] localAddresses = new long[MAX_MEMBERS];
    private final long[] targetAddresses = new long[MAX_MEMBERS];
    private final long[] lengths = new long[MAX_MEMBERS];
    private final long[] traceIds = new long[MAX_MEMBERS];
    private final long[] submitNanos = new long[MAX_MEMBERS];
    private final long[] intakeNanos = new long[MAX_MEMBERS];
    /** The worker's result for each member: a status, or the worker's mark of a member handed to another stage. */
    private final int[] statuses = new int[MAX_MEMBERS];
    /** The journal's id of the path each member took (shared memory, or a file's kind). */
    private final int[] nics = new int[MAX_MEMBERS];
    private int count;
    private long bytes;

    /**
     * @return false when the request does not fit (the run is full, or it would carry too many bytes).
     */
    boolean add(final long requestId, final BatchTracker batch, final int batchEntry, final long localAddress,
        final long targetAddress, final long length, final long traceId, final long submitNanos,
        final long intakeNanos)
    {
        if (count == MAX_MEMBERS || length > MAX_RUN_BYTES - bytes)
        {
            return false;
        }
        final int i = count;
        requestIds[i] = requestId;
        batches[i] = batch;
        batchEntries[i] = batchEntry;
        localAddresses[i] = localAddress;
        targetAddresses[i] = targetAddress;
        lengths[i] = length;
        traceIds[i] = traceId;
        this.submitNanos[i] = submitNanos;
        this.intakeNanos[i] = intakeNanos;
        count = i + 1;
        bytes += length;
        return true;
    }

    /**
     * @return the requests carried, or 0 for a command of one request.
     */
    int count()
    {
        return count;
    }

    /**
     * @return the bytes the members ask for, together.
     */
    long bytes()
    {
        return bytes;
    }

    long requestId(final int member)
    {
        return requestIds[member];
    }

    /**
     * @return the SUBMIT_BATCH the member is an entry of, or null for a SUBMIT.
     */
    BatchTracker batch(final int member)
    {
        return batches[member];
    }

    int batchEntry(final int member)
    {
        return batchEntries[member];
    }

    long localAddress(final int member)
    {
        return localAddresses[member];
    }

    long targetAddress(final int member)
    {
        return targetAddresses[member];
    }

    long length(final int member)
    {
        return lengths[member];
    }

    long traceId(final int member)
    {
        return traceIds[member];
    }

    long submitNanos(final int member)
    {
        return submitNanos[member];
    }

    long intakeNanos(final int member)
    {
        return intakeNanos[member];
    }

    int status(final int member)
    {
        return statuses[member];
    }

    int nic(final int member)
    {
        return nics[member];
    }

    void result(final int member, final int status, final int nic)
    {
        statuses[member] = status;
        nics[member] = nic;
    }

    /**
     * Forget every member (and the batch trackers they referred to).
     */
    void clear()
    {
        for (int i = 0; i < count; i++)
        {
            batches[i] = null;
        }
        count = 0;
        bytes = 0;
    }
}
