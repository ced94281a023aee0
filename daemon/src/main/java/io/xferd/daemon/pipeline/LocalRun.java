package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The small local requests one pipeline command carries when intake gathered them into a run: requests of one client
 * to one segment of this daemon, one opcode, no notify, each at most {@link #MAX_MEMBER_LENGTH} bytes, read from the
 * client's ring in one pass. They cross the pipeline as one event (one claim, one publish, one poll, one borrow of
 * the client), and the worker checks and copies each on its own (every bound, grant and region as for a lone
 * request) and answers them together: a SUBMIT with its own completion, the entries of a SUBMIT_BATCH with one count
 * into their batch. Empty ({@link #count()} 0) for a command of one request, which answers with its own fields.
 * <p>
 * Runs come from a small pool that intake takes from and workers give back to ({@link #recycle()}), not one per
 * pipeline slot: a few kilobytes each, a thousand of them would be cold in the caches every time the ring came round
 * to one. Allocation-free once the pool exists; one owner at a time (intake, then a worker).
 */
final class LocalRun
{
    /** A command's run when it carries none: holds no member, takes none. */
    static final LocalRun NONE = new LocalRun(0, null);

    /** The most requests one command carries. */
    static final int MAX_MEMBERS = 64;
    /** Requests longer than this go alone: their copy is the cost, and their completion should not wait on others. */
    static final long MAX_MEMBER_LENGTH = 64 * 1024;
    /** The most bytes a run moves before its first completion is written. */
    static final long MAX_RUN_BYTES = 1024 * 1024;

    private final ManyToOneConcurrentArrayQueue<LocalRun> pool;
    private final int capacity;
    private final long[] requestIds;
    private final BatchTracker[] batches;
    private final int[] batchEntries;
    private final long[] localAddresses;
    private final long[] targetAddresses;
    private final long[] lengths;
    private final long[] traceIds;
    private final long[] submitNanos;
    private final long[] intakeNanos;
    /** The worker's result for each member: a status, or the worker's mark of a member handed to another stage. */
    private final int[] statuses;
    /** The journal's id of the path each member took (shared memory, or a file's kind). */
    private final int[] nics;
    private int count;
    private long bytes;

    /**
     * @param pool where {@link #recycle()} gives it back.
     */
    LocalRun(final ManyToOneConcurrentArrayQueue<LocalRun> pool)
    {
        this(MAX_MEMBERS, pool);
    }

    private LocalRun(final int capacity, final ManyToOneConcurrentArrayQueue<LocalRun> pool)
    {
        this.pool = pool;
        this.capacity = capacity;
        requestIds = new long[capacity];
        batches = new BatchTracker[capacity];
        batchEntries = new int[capacity];
        localAddresses = new long[capacity];
        targetAddresses = new long[capacity];
        lengths = new long[capacity];
        traceIds = new long[capacity];
        submitNanos = new long[capacity];
        intakeNanos = new long[capacity];
        statuses = new int[capacity];
        nics = new int[capacity];
    }

    /**
     * @return false when the request does not fit (the run is full, or it would carry too many bytes).
     */
    boolean add(final long requestId, final BatchTracker batch, final int batchEntry, final long localAddress,
        final long targetAddress, final long length, final long traceId, final long submitNanos,
        final long intakeNanos)
    {
        if (count == capacity || length > MAX_RUN_BYTES - bytes)
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
     * Forget every member and go back to the pool (nothing for {@link #NONE}). The run's last owner only.
     */
    void recycle()
    {
        if (pool != null)
        {
            clear();
            pool.offer(this); // cannot be full: it holds at most the runs it was made with
        }
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
