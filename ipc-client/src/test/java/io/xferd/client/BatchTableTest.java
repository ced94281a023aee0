package io.xferd.client;

import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client's batch slots: a request id names its batch, the batch's generation and its task, so that a completion
 * finds its task without a lookup and a late completion for a freed (or reused) batch is ignored.
 */
class BatchTableTest
{
    private final BatchTable table = new BatchTable(2);

    /** What the submitter does when a task's record goes into the submit ring. */
    private long submit(final BatchTable.Batch batch)
    {
        return batch.requestId(table.start(batch, 0));
    }

    @Test
    void shouldCompleteEachTaskOnceByItsRequestId()
    {
        final BatchTable.Batch batch = table.batch(table.allocate(3));
        final long first = submit(batch);
        final long second = submit(batch);

        assertThat(table.complete(second, TransferStatus.OK, 100, 7)).isTrue();
        assertThat(table.complete(first, TransferStatus.TARGET_GONE, 0, 8)).isTrue();
        assertThat(table.complete(first, TransferStatus.OK, 100, 9)).as("a task completes once").isFalse();

        assertThat(batch.state[0]).isEqualTo(TaskStatus.FAILED);
        assertThat(batch.status[0]).isEqualTo(TransferStatus.TARGET_GONE);
        assertThat(batch.state[1]).isEqualTo(TaskStatus.COMPLETED);
        assertThat(batch.bytes[1]).isEqualTo(100);
        assertThat(batch.completeNanos[1]).isEqualTo(7);
        assertThat(batch.state[2]).as("never submitted").isEqualTo(TaskStatus.WAITING);
        assertThat(batch.pending).isZero();
    }

    @Test
    void shouldIgnoreACompletionForAFreedBatchEvenWhenItsSlotIsReused()
    {
        final long oldId = table.allocate(1);
        final BatchTable.Batch old = table.batch(oldId);
        final long late = submit(old);
        table.complete(late, TransferStatus.OK, 1, 1);
        table.free(oldId);

        final long newId = table.allocate(1);
        final BatchTable.Batch reused = table.batch(newId);
        assertThat(reused).as("the same slot, a new generation").isSameAs(old);
        submit(reused);

        assertThat(table.complete(late, TransferStatus.OK, 1, 2)).isFalse();
        assertThat(reused.state[0]).isEqualTo(TaskStatus.PENDING);
        assertThatThrownBy(() -> table.batch(oldId)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldIgnoreIdsThatNameNoTask()
    {
        final BatchTable.Batch batch = table.batch(table.allocate(2));
        final long id = submit(batch);

        assertThat(table.complete(id + 1, TransferStatus.OK, 1, 1)).as("task not submitted").isFalse();
        assertThat(table.complete(7L << 40, TransferStatus.OK, 1, 1)).as("no such slot").isFalse();
        assertThat(table.complete(-1L, TransferStatus.OK, 1, 1)).isFalse();
        assertThat(table.complete(Long.MAX_VALUE, TransferStatus.OK, 1, 1)).isFalse();
        assertThat(batch.pending).isEqualTo(1);
    }

    @Test
    void shouldRefuseToFreeABatchWithPendingTasksAndFailThemAllWhenTheDaemonIsGone()
    {
        final long id = table.allocate(4);
        final BatchTable.Batch batch = table.batch(id);
        submit(batch);
        submit(batch);
        table.complete(batch.requestId(0), TransferStatus.OK, 8, 1);

        assertThatThrownBy(() -> table.free(id)).isInstanceOf(XferException.class).hasMessageContaining("1 pending");

        assertThat(table.failAllPending(TransferStatus.DAEMON_GONE)).isEqualTo(1);
        assertThat(batch.state[0]).isEqualTo(TaskStatus.COMPLETED);
        assertThat(batch.state[1]).isEqualTo(TaskStatus.FAILED);
        assertThat(batch.status[1]).isEqualTo(TransferStatus.DAEMON_GONE);
        table.free(id);
    }

    @Test
    void shouldCountTasksInFlightAcrossBatchesAsTheDaemonsLimitDoes()
    {
        final BatchTable.Batch first = table.batch(table.allocate(2));
        final BatchTable.Batch second = table.batch(table.allocate(1));
        final long a = submit(first);
        submit(first);
        submit(second);
        assertThat(table.inFlight()).isEqualTo(3);

        table.complete(a, TransferStatus.OK, 1, 1);
        table.complete(a, TransferStatus.OK, 1, 1);
        table.complete(-1L, TransferStatus.OK, 1, 1);
        assertThat(table.inFlight()).as("only a pending task's completion counts").isEqualTo(2);

        table.failAllPending(TransferStatus.DAEMON_GONE);
        assertThat(table.inFlight()).isZero();
    }

    @Test
    void shouldRefuseBadSizesAndTooManyBatches()
    {
        assertThatThrownBy(() -> table.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> table.allocate(BatchTable.MAX_TASKS + 1)).isInstanceOf(IllegalArgumentException.class);
        table.allocate(BatchTable.MAX_TASKS);
        table.allocate(1);
        assertThatThrownBy(() -> table.allocate(1)).isInstanceOf(XferException.class).hasMessageContaining("in use");
    }

    @Test
    void shouldKeepTheLastTaskOfAFullBatchApartFromTheNextSlot()
    {
        final BatchTable.Batch batch = table.batch(table.allocate(BatchTable.MAX_TASKS));
        for (int i = 0; i < BatchTable.MAX_TASKS; i++)
        {
            submit(batch);
        }
        final BatchTable.Batch other = table.batch(table.allocate(1));
        submit(other);

        assertThat(table.complete(batch.requestId(BatchTable.MAX_TASKS - 1), TransferStatus.OK, 1, 1)).isTrue();
        assertThat(other.state[0]).as("task 65535 of slot 0 is not task 0 of slot 1").isEqualTo(TaskStatus.PENDING);
    }

    @Test
    void shouldRefuseToFreeABatchTwiceOrByAStaleId()
    {
        final long id = table.allocate(1);
        table.free(id);

        assertThatThrownBy(() -> table.free(id)).isInstanceOf(IllegalArgumentException.class);
        final long reusedId = table.allocate(1);
        assertThatThrownBy(() -> table.free(id)).as("the slot's new batch stays").isInstanceOf(IllegalArgumentException.class);
        assertThat(table.batch(reusedId).inUse()).isTrue();
    }

    @Test
    @Timeout(60)
    void shouldGiveEachOfSeveralThreadsAllocatingAtOnceASlotOfItsOwn() throws Exception
    {
        final int threads = 4;
        final int rounds = 20_000;
        final BatchTable shared = new BatchTable(threads); // exactly one slot each: a slot given twice shows at once
        final AtomicIntegerArray holder = new AtomicIntegerArray(threads);
        final AtomicReference<String> fault = new AtomicReference<>();
        final CyclicBarrier start = new CyclicBarrier(threads);
        final Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            final int self = t + 1;
            workers[t] = new Thread(() ->
            {
                try
                {
                    start.await();
                    for (int round = 0; round < rounds && fault.get() == null; round++)
                    {
                        final long id = shared.allocate(1);
                        final int slot = shared.batch(id).slot;
                        if (!holder.compareAndSet(slot, 0, self))
                        {
                            fault.compareAndSet(null, "slot " + slot + " given to " + self + " while " +
                                holder.get(slot) + " holds it");
                        }
                        holder.set(slot, 0);
                        shared.free(id);
                    }
                }
                catch (final Exception ex)
                {
                    fault.compareAndSet(null, ex.toString());
                }
            });
            workers[t].start();
        }
        for (final Thread worker : workers)
        {
            worker.join();
        }

        assertThat(fault.get()).isNull();
        for (int i = 0; i < threads; i++)
        {
            shared.allocate(1);
        }
        assertThatThrownBy(() -> shared.allocate(1)).as("every slot was given back").isInstanceOf(XferException.class);
    }
}
