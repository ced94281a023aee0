package io.xferd.daemon.journal;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The journal's thread, asleep for up to an hour after a quiet spell, is woken by the next record, and never parks
 * over a record claimed before it marked itself asleep.
 */
@Timeout(60)
class JournalDoorbellTest
{
    private static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);

    private final AtomicCounter dropped = new CountersManager(
        new UnsafeBuffer(new byte[64 * 1024]), new UnsafeBuffer(new byte[16 * 1024])).newCounter("dropped");

    @Test
    void shouldWakeTheSleepingJournalThreadWithTheNextRecord() throws InterruptedException
    {
        final JournalRecorder recorder = new JournalRecorder(4096, dropped, new JournalNames());
        final Thread sleeper = sleepOn(recorder.doorbell());
        awaitParked(sleeper);

        recorder.onSubmitted(0, 1, 0, 1, 64, 0, 0);

        sleeper.join(); // only the record can end a park of an hour within the test's timeout
        assertThat(recorder.ring().size()).isPositive();
    }

    @Test
    void shouldNotParkOverARecordAlreadyInTheRing() throws InterruptedException
    {
        final JournalRecorder recorder = new JournalRecorder(4096, dropped, new JournalNames());
        final JournalDoorbell doorbell = recorder.doorbell();
        recorder.onSubmitted(0, 1, 0, 1, 64, 0, 0); // before the mark: it rings nothing
        doorbell.arm();
        doorbell.await(HOUR_NS); // returns: the tail is past the head
        assertThat(recorder.ring().size()).isPositive();
    }

    private static Thread sleepOn(final JournalDoorbell doorbell)
    {
        return Thread.ofPlatform().name("journal-sleeper").start(() ->
        {
            doorbell.arm();
            doorbell.await(HOUR_NS);
        });
    }

    private static void awaitParked(final Thread thread) throws InterruptedException
    {
        while (thread.getState() != Thread.State.TIMED_WAITING)
        {
            Thread.sleep(1);
        }
    }
}
