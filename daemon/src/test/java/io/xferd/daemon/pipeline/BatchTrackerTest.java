package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class BatchTrackerTest
{
    private final ManyToOneConcurrentArrayQueue<BatchTracker> held = new ManyToOneConcurrentArrayQueue<>(8);
    private final BatchTrackerPool pool = new BatchTrackerPool(2, held);

    @Test
    void shouldFinishOnceWithTheLowestFailedEntrysStatusWhateverTheOrderOfEnds() throws InterruptedException
    {
        final int entries = 10_000;
        final BatchTracker batch = pool.take();
        batch.begin(null, 1, 1, entries, 0, 0, 0, 0);
        final AtomicInteger finished = new AtomicInteger();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++)
        {
            final int first = t;
            threads.add(Thread.ofPlatform().start(() ->
            {
                awaitQuietly(start);
                for (int e = entries - 1 - first; e >= 0; e -= 4)
                {
                    final int status = e == 777 ? TransferStatus.TARGET_GONE :
                        e == 4321 ? TransferStatus.INVALID_LENGTH : TransferStatus.OK;
                    if (batch.entryDone(e, status, 10) == BatchTracker.FINISHED)
                    {
                        finished.incrementAndGet();
                    }
                }
            }));
        }
        start.countDown();
        for (final Thread thread : threads)
        {
            thread.join();
        }
        assertThat(finished.get()).isOne();
        assertThat(TransferStatus.name(batch.status())).isEqualTo("TARGET_GONE");
        assertThat(batch.bytesTransferred()).isZero();
    }

    @Test
    void shouldReleaseTheHeldLastEntryOnlyWhenEveryOtherLanded()
    {
        final BatchTracker batch = pool.take();
        batch.begin(null, 1, 1, 3, 0, 0, 0, 0);
        batch.holdsBackLast = true;
        assertThat(batch.entryDone(1, TransferStatus.OK, 5)).isEqualTo(BatchTracker.PENDING);
        assertThat(batch.entryDone(0, TransferStatus.OK, 5)).isEqualTo(BatchTracker.RELEASE_HELD);
        assertThat(batch.entryDone(2, TransferStatus.OK, 5)).isEqualTo(BatchTracker.FINISHED);
        assertThat(batch.bytesTransferred()).isEqualTo(15);

        batch.begin(null, 2, 1, 3, 0, 0, 0, 0);
        batch.holdsBackLast = true;
        assertThat(batch.entryDone(0, TransferStatus.UNKNOWN_SEGMENT, 0)).isEqualTo(BatchTracker.PENDING);
        assertThat(batch.entryDone(1, TransferStatus.OK, 5)).as("a failure: the held entry never goes")
            .isEqualTo(BatchTracker.FINISHED_WITHOUT_HELD);
        assertThat(TransferStatus.name(batch.status())).isEqualTo("UNKNOWN_SEGMENT");
    }

    @Test
    void shouldCountARunOfEntriesAtOnceAndMixWithEntriesEndingOneByOne()
    {
        final BatchTracker batch = pool.take();
        batch.begin(null, 1, 1, 10, 0, 0, 0, 0);
        assertThat(batch.entriesDone(4, 0, TransferStatus.OK, 40)).isEqualTo(BatchTracker.PENDING);
        assertThat(batch.entryDone(9, TransferStatus.OK, 10)).isEqualTo(BatchTracker.PENDING);
        assertThat(batch.entriesDone(5, 6, TransferStatus.TARGET_GONE, 40)).as("the last five")
            .isEqualTo(BatchTracker.FINISHED);
        assertThat(TransferStatus.name(batch.status())).isEqualTo("TARGET_GONE");
        assertThat(batch.bytesTransferred()).as("nothing reported moved when an entry failed").isZero();

        batch.begin(null, 2, 1, 6, 0, 0, 0, 0);
        assertThat(batch.entriesDone(3, 2, TransferStatus.INVALID_LENGTH, 20)).isEqualTo(BatchTracker.PENDING);
        assertThat(batch.entriesDone(3, 4, TransferStatus.TARGET_GONE, 20)).isEqualTo(BatchTracker.FINISHED);
        assertThat(TransferStatus.name(batch.status())).as("the lowest failed entry's, whichever run ends last")
            .isEqualTo("INVALID_LENGTH");

        batch.begin(null, 3, 1, 5, 0, 0, 0, 0);
        batch.holdsBackLast = true;
        assertThat(batch.entriesDone(4, 0, TransferStatus.OK, 40)).isEqualTo(BatchTracker.RELEASE_HELD);
        assertThat(batch.entryDone(4, TransferStatus.OK, 10)).isEqualTo(BatchTracker.FINISHED);
        assertThat(batch.bytesTransferred()).isEqualTo(50);
    }

    @Test
    void shouldGoBackToItsPool()
    {
        final BatchTracker first = pool.take();
        final BatchTracker second = pool.take();
        assertThat(pool.take()).as("both out: the client waits").isNull();
        first.recycle();
        assertThat(pool.take()).isSameAs(first);
        assertThat(second).isNotSameAs(first);
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
