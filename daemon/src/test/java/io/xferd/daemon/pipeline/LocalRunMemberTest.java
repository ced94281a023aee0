package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a {@link LocalRun} tells about each member: a SUBMIT's own ids and times, and a batch entry's from its batch
 * (an entry stores only what differs per entry), also in a run reused after one that carried SUBMITs.
 */
class LocalRunMemberTest
{
    private final LocalRun run = new LocalRun(new ManyToOneConcurrentArrayQueue<>(1));

    @Test
    void shouldAnswerASubmitsOwnIdsAndABatchEntrysFromItsBatchAfterTheRunIsReused()
    {
        final BatchTracker batch = new BatchTrackerPool(1, new ManyToOneConcurrentArrayQueue<>(1)).take();
        batch.begin(null, 900, 1, 4, 0, 901, 902, 903);

        assertThat(run.add(7, null, 0, 0x1000, 0x2000, 64, 8, 9, 10)).isTrue();
        assertThat(run.requestId(0)).isEqualTo(7);
        assertThat(run.traceId(0)).isEqualTo(8);
        assertThat(run.submitNanos(0)).isEqualTo(9);
        assertThat(run.intakeNanos(0)).isEqualTo(10);

        run.clear();
        assertThat(run.addEntry(batch, 3, 0x3000, 0x4000, 64)).isTrue();
        assertThat(run.add(11, null, 0, 0x5000, 0x6000, 64, 12, 13, 14)).isTrue();

        assertThat(run.batch(0)).isSameAs(batch);
        assertThat(run.batchEntry(0)).isEqualTo(3);
        assertThat(run.requestId(0)).as("the batch's, not the SUBMIT's left in the slot").isEqualTo(900);
        assertThat(run.traceId(0)).isEqualTo(901);
        assertThat(run.submitNanos(0)).isEqualTo(902);
        assertThat(run.intakeNanos(0)).isEqualTo(903);
        assertThat(run.requestId(1)).isEqualTo(11);
        assertThat(run.traceId(1)).isEqualTo(12);
        assertThat(run.submitNanos(1)).isEqualTo(13);
        assertThat(run.intakeNanos(1)).isEqualTo(14);
        assertThat(run.bytes()).isEqualTo(128);
    }
}
