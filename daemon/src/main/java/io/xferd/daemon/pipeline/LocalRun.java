package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import io.xferd.ipc.TransferStatus;
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
    /** A SUBMIT's own (a batch entry's are its tracker's): request ids, trace ids, submit and intake times. */
    private final long[] traceIds;
    private final long[] submitNanos;
    private final long[] intakeNanos;
    /** The worker's result for each member: a status, or the worker's mark of a member handed to another stage. */
    private final int[] statuses;
    /** The journal's id of the path each member took (shared memory, or a file's kind). */
    private final int[] nics;
    private int count;
    private long bytes;
    /** Tallied as results come in, so the worker moves its counters without a pass over the members. */
    private int succeeded;
    private int failures;
    private long moved;

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
        if (!addEntry(batch, batchEntry, localAddress, targetAddress, length))
        {
            return false;
        }
        final int i = count - 1;
        requestIds[i] = requestId;
        traceIds[i] = traceId;
        this.submitNanos[i] = submitNanos;
        this.intakeNanos[i] = intakeNanos;
        return true;
    }

    /**
     * Add an entry of a SUBMIT_BATCH: its request id, trace id and times are the batch's, read from its tracker (which
     * outlives the run: the batch ends only once this run counted its entries into it), so only what differs per
     * entry is stored.
     *
     * @return false when the entry does not fit (the run is full, or it would carry too many bytes).
     */
    boolean addEntry(final BatchTracker batch, final int batchEntry, final long localAddress,
        final long targetAddress, final long length)
    {
        if (count == capacity || length > MAX_RUN_BYTES - bytes)
        {
            return false;
        }
        final int i = count;
        batches[i] = batch;
        batchEntries[i] = batchEntry;
        localAddresses[i] = localAddress;
        targetAddresses[i] = targetAddress;
        lengths[i] = length;
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
        final BatchTracker batch = batches[member];
        return batch != null ? batch.requestId : requestIds[member];
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
        final BatchTracker batch = batches[member];
        return batch != null ? batch.traceId : traceIds[member];
    }

    long submitNanos(final int member)
    {
        final BatchTracker batch = batches[member];
        return batch != null ? batch.submitNanos : submitNanos[member];
    }

    long intakeNanos(final int member)
    {
        final BatchTracker batch = batches[member];
        return batch != null ? batch.intakeNanos : intakeNanos[member];
    }

    int status(final int member)
    {
        return statuses[member];
    }

    int nic(final int member)
    {
        return nics[member];
    }

    /**
     * The worker's result for a member: a status, or a negative mark of a member another stage answers (not
     * counted here).
     */
    void result(final int member, final int status, final int nic)
    {
        statuses[member] = status;
        nics[member] = nic;
        if (status == TransferStatus.OK)
        {
            succeeded++;
            moved += lengths[member];
        }
        else if (status > 0)
        {
            failures++;
        }
    }

    /**
     * The same result for members {@code [from, to)}, which together moved {@code spanBytes} when it is OK (a span
     * copied as one).
     */
    void result(final int from, final int to, final int status, final int nic, final long spanBytes)
    {
        for (int member = from; member < to; member++)
        {
            statuses[member] = status;
            nics[member] = nic;
        }
        if (status == TransferStatus.OK)
        {
            succeeded += to - from;
            moved += spanBytes;
        }
        else if (status > 0)
        {
            failures += to - from;
        }
    }

    /**
     * @return the members whose result is OK.
     */
    int succeeded()
    {
        return succeeded;
    }

    /**
     * @return the bytes the members whose result is OK moved, together.
     */
    long moved()
    {
        return moved;
    }

    /**
     * @return the members that failed (a status other than OK).
     */
    int failures()
    {
        return failures;
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
        succeeded = 0;
        failures = 0;
        moved = 0;
    }
}
