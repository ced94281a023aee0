package io.xferd.client;

import io.xferd.ipc.TransferStatus;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Batches as Mooncake's API has them (allocate, submit tasks, read each task's status, free), kept in
 * pre-allocated slots so that submitting and completing allocate nothing. A request id carries its batch slot,
 * the slot's generation (so a late completion for a freed batch is ignored) and its task index:
 * {@code slot << 40 | generation << 16 | task}. Allocating and freeing may come from any thread; starting and
 * completing tasks from the one thread that submits and polls. A slot's generation and whether it is in use are
 * one word, taken and given back by one CAS each (no lock: a caller allocating and freeing a batch per request pays
 * two atomics, not two lock-unlock pairs); a stale or twice-freed id fails that CAS.
 */
final class BatchTable
{
    static final int MAX_TASKS = 1 << 16;
    private static final int GENERATION_MASK = 0xFF_FFFF;
    private static final int IN_USE = 1;
    private static final VarHandle USE;

    static
    {
        try
        {
            USE = MethodHandles.lookup().findVarHandle(Batch.class, "use", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Batch[] slots;
    private int inFlight;

    static final class Batch
    {
        final int slot;
        /** {@code generation << 1 | IN_USE} while allocated, {@code generation << 1} once freed. */
        volatile int use;
        /** The generation last allocated: written by the allocating thread after its CAS won the slot. */
        int generation;
        int capacity;
        int submitted;
        int pending;
        int[] state = new int[0];
        int[] status = new int[0];
        long[] bytes = new long[0];
        long[] submitNanos = new long[0];
        long[] completeNanos = new long[0];

        Batch(final int slot)
        {
            this.slot = slot;
        }

        long requestId(final int task)
        {
            return ((long)slot << 40) | ((long)generation << 16) | task;
        }

        boolean isLive(final int generation)
        {
            return use == (generation << 1 | IN_USE);
        }

        boolean inUse()
        {
            return (use & IN_USE) != 0;
        }
    }

    BatchTable(final int maxBatches)
    {
        slots = new Batch[maxBatches];
        for (int i = 0; i < maxBatches; i++)
        {
            slots[i] = new Batch(i);
        }
    }

    long allocate(final int capacity)
    {
        if (capacity <= 0 || capacity > MAX_TASKS)
        {
            throw new IllegalArgumentException("batch size must be 1.." + MAX_TASKS + ": " + capacity);
        }
        for (final Batch batch : slots)
        {
            // a failed CAS on a slot still free (another thread took and gave it back meanwhile) tries it again:
            // moving on could miss the last free slot
            for (int use = batch.use; (use & IN_USE) == 0; use = batch.use)
            {
                final int generation = ((use >>> 1) + 1) & GENERATION_MASK;
                if (!USE.compareAndSet(batch, use, generation << 1 | IN_USE))
                {
                    continue;
                }
                batch.generation = generation;
                batch.capacity = capacity;
                batch.submitted = 0;
                batch.pending = 0;
                if (batch.state.length < capacity)
                {
                    batch.state = new int[capacity];
                    batch.status = new int[capacity];
                    batch.bytes = new long[capacity];
                    batch.submitNanos = new long[capacity];
                    batch.completeNanos = new long[capacity];
                }
                Arrays.fill(batch.state, 0, capacity, TaskStatus.WAITING);
                return batch.requestId(0) >>> 16;
            }
        }
        throw new XferException("all " + slots.length + " batches are in use: free some with freeBatch");
    }

    /**
     * @return the live batch a batch id names.
     * @throws IllegalArgumentException when the id is stale or unknown.
     */
    Batch batch(final long batchId)
    {
        final int slot = (int)(batchId >>> 24);
        final int generation = (int)(batchId & GENERATION_MASK);
        if (slot < 0 || slot >= slots.length || !slots[slot].isLive(generation))
        {
            throw new IllegalArgumentException("unknown or freed batch id " + batchId);
        }
        return slots[slot];
    }

    /**
     * Account the batch's next task as submitted and pending from {@code nowNanos}; the caller has checked that the
     * batch has room.
     *
     * @return the task's index in the batch.
     */
    int start(final Batch batch, final long nowNanos)
    {
        final int task = batch.submitted++;
        batch.state[task] = TaskStatus.PENDING;
        batch.submitNanos[task] = nowNanos;
        batch.pending++;
        inFlight++;
        return task;
    }

    /**
     * @return tasks submitted and not yet finished, over all batches: what the daemon's in-flight limit counts.
     */
    int inFlight()
    {
        return inFlight;
    }

    /**
     * Record a completion; ignores ids of batches freed since.
     *
     * @return true when the id named a pending task.
     */
    boolean complete(final long requestId, final int status, final long bytes, final long nowNanos)
    {
        final int slot = (int)(requestId >>> 40);
        final int generation = (int)((requestId >>> 16) & GENERATION_MASK);
        final int task = (int)(requestId & 0xFFFF);
        if (slot < 0 || slot >= slots.length)
        {
            return false;
        }
        final Batch batch = slots[slot];
        if (!batch.isLive(generation) || task >= batch.submitted ||
            batch.state[task] != TaskStatus.PENDING)
        {
            return false;
        }
        batch.state[task] = status == TransferStatus.OK ? TaskStatus.COMPLETED : TaskStatus.FAILED;
        batch.status[task] = status;
        batch.bytes[task] = bytes;
        batch.completeNanos[task] = nowNanos;
        batch.pending--;
        inFlight--;
        return true;
    }

    /**
     * Fail every pending task (the daemon went away).
     */
    int failAllPending(final int status)
    {
        int failed = 0;
        for (final Batch batch : slots)
        {
            if (batch.inUse())
            {
                for (int task = 0; task < batch.submitted; task++)
                {
                    if (batch.state[task] == TaskStatus.PENDING)
                    {
                        batch.state[task] = TaskStatus.FAILED;
                        batch.status[task] = status;
                        failed++;
                    }
                }
                batch.pending = 0;
            }
        }
        inFlight = 0;
        return failed;
    }

    void free(final long batchId)
    {
        final Batch batch = batch(batchId);
        if (batch.pending > 0)
        {
            throw new XferException("batch " + batchId + " still has " + batch.pending + " pending task(s)");
        }
        final int generation = (int)(batchId & GENERATION_MASK);
        if (!USE.compareAndSet(batch, generation << 1 | IN_USE, generation << 1))
        {
            throw new IllegalArgumentException("unknown or freed batch id " + batchId); // freed meanwhile
        }
    }
}
