package io.xferd.client;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One thread at a time reads the completion ring: another that tries meanwhile is turned away rather than made to
 * wait, and closing waits for the holder to leave, after which nobody gets in (the ring is about to be unmapped).
 */
@Timeout(30)
class PollLockTest
{
    private final PollLock lock = new PollLock();

    @Test
    void shouldTurnAwayASecondThreadWhileOneHoldsIt() throws Exception
    {
        assertThat(lock.tryLock()).isTrue();
        assertThat(tryLockOnAnotherThread()).isFalse();
        assertThat(lock.tryLock()).as("not reentrant: a poll never polls").isFalse();

        lock.unlock();

        assertThat(tryLockOnAnotherThread()).isTrue();
    }

    @Test
    void shouldCloseOnlyOnceTheHolderLeftAndLetNobodyInAfter() throws Exception
    {
        assertThat(lock.tryLock()).isTrue();
        final CountDownLatch closed = new CountDownLatch(1);
        final Thread closer = new Thread(() ->
        {
            lock.close();
            closed.countDown();
        });
        closer.start();

        assertThat(closed.await(50, TimeUnit.MILLISECONDS)).as("a poll is in progress").isFalse();
        assertThat(lock.isClosed()).isFalse();
        lock.unlock();

        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
        closer.join();
        assertThat(lock.isClosed()).isTrue();
        assertThat(lock.tryLock()).isFalse();
        assertThat(tryLockOnAnotherThread()).isFalse();
        lock.close(); // twice is fine
    }

    private boolean tryLockOnAnotherThread() throws InterruptedException
    {
        final boolean[] got = new boolean[1];
        final Thread other = new Thread(() ->
        {
            got[0] = lock.tryLock();
            if (got[0])
            {
                lock.unlock();
            }
        });
        other.start();
        other.join();
        return got[0];
    }
}
