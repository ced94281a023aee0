package io.xferd.daemon.transport.tcp;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A connection's slices in flight ({@link InFlightSlices}), as a specification: an answer finds its slice by the id
 * it carries in whatever order answers come, an id answered already or never sent finds nothing, a slot is reused
 * only once its slice was answered (a stalled slice holds the sender back), the oldest slice still in flight is
 * known after each answer, and whoever fails a broken connection's slices takes each exactly once.
 */
class InFlightSlicesTest
{
    private static final int CAPACITY = 8;

    private final InFlightSlices inFlight = new InFlightSlices(CAPACITY);

    @Test
    void shouldFindEachSliceByItsIdInAnyOrderAndEachOnlyOnce()
    {
        final Random random = new Random(42);
        final List<Long> ids = new ArrayList<>();
        final List<Slice> slices = new ArrayList<>();
        for (int i = 0; i < CAPACITY; i++)
        {
            final Slice slice = sent(i, 1000 + i);
            slices.add(slice);
            ids.add(slice.inFlightId);
        }
        assertThat(new HashSet<>(ids)).as("ids unique among those in flight").hasSize(CAPACITY);
        Collections.shuffle(ids, random);

        for (final long id : ids)
        {
            final Slice slice = inFlight.take(id);
            assertThat(slice).as("slice of id %d", id).isNotNull();
            assertThat(slice.inFlightId).isEqualTo(id);
            assertThat(inFlight.take(id)).as("a second answer to %d", id).isNull();
        }
        assertThat(inFlight.isEmpty()).isTrue();
        assertThat(inFlight.take(ids.get(0) + CAPACITY)).as("an id never sent").isNull();
        assertThat(inFlight.take(0)).isNull();
        assertThat(inFlight.take(-1)).isNull();
    }

    @Test
    void shouldHoldTheSenderBackWhileTheSliceInTheNextSlotIsUnanswered()
    {
        final Slice stalled = sent(0, 1);
        for (int i = 1; i < CAPACITY; i++)
        {
            final Slice answered = sent(i, 1 + i);
            assertThat(inFlight.take(answered.inFlightId)).isSameAs(answered);
        }

        assertThat(inFlight.hasRoom()).as("the next sequence's slot is the stalled slice's").isFalse();
        assertThatThrownBy(() -> inFlight.add(new Slice(99))).isInstanceOf(IllegalStateException.class);
        assertThat(inFlight.take(stalled.inFlightId)).isSameAs(stalled);
        assertThat(inFlight.hasRoom()).isTrue();
        final Slice next = sent(100, 50);
        assertThat(next.inFlightId).as("a new id for the reused slot").isNotEqualTo(stalled.inFlightId);
        assertThat(inFlight.take(stalled.inFlightId)).as("the stalled slice's id, answered late").isNull();
        assertThat(inFlight.take(next.inFlightId)).isSameAs(next);
    }

    @Test
    void shouldKnowTheOldestSliceStillInFlightAfterEachAnswer()
    {
        final Slice first = sent(0, 10);
        final Slice second = sent(1, 20);
        final Slice third = sent(2, 30);
        assertThat(inFlight.isOldest(first.inFlightId)).isTrue();

        assertThat(inFlight.take(second.inFlightId)).isSameAs(second);
        assertThat(inFlight.oldestSentNanos()).as("a younger answer: the first still owed").isEqualTo(10);
        assertThat(inFlight.isOldest(third.inFlightId)).isFalse();

        assertThat(inFlight.take(first.inFlightId)).isSameAs(first);
        assertThat(inFlight.oldestSentNanos()).isEqualTo(30);
        assertThat(inFlight.isOldest(third.inFlightId)).isTrue();

        assertThat(inFlight.take(third.inFlightId)).isSameAs(third);
        assertThat(inFlight.oldestSentNanos()).as("nothing owed").isEqualTo(InFlightSlices.NONE_IN_FLIGHT);
    }

    @Test
    void shouldTellASliceSentAtClockZeroFromNothingInFlight()
    {
        final Slice atZero = sent(0, 0);
        assertThat(inFlight.oldestSentNanos()).as("owed since 0, not nothing owed").isZero();
        assertThat(inFlight.take(atZero.inFlightId)).isSameAs(atZero);
        assertThat(inFlight.oldestSentNanos()).isEqualTo(InFlightSlices.NONE_IN_FLIGHT);
    }

    @Test
    void shouldGiveEachSliceOfABrokenConnectionToExactlyOneOfTheThreadsFailingThem() throws Exception
    {
        final Set<Slice> sent = new HashSet<>();
        for (int i = 0; i < CAPACITY; i++)
        {
            sent.add(sent(i, i));
        }
        final List<Slice> takenA = new ArrayList<>();
        final List<Slice> takenB = new ArrayList<>();
        final Thread a = new Thread(() -> drain(takenA));
        final Thread b = new Thread(() -> drain(takenB));
        a.start();
        b.start();
        a.join();
        b.join();

        final List<Slice> all = new ArrayList<>(takenA);
        all.addAll(takenB);
        assertThat(all).hasSize(CAPACITY).containsExactlyInAnyOrderElementsOf(sent);
        assertThat(inFlight.size()).isZero();
    }

    private void drain(final List<Slice> taken)
    {
        Slice slice;
        while ((slice = inFlight.takeAny()) != null)
        {
            taken.add(slice);
        }
    }

    private Slice sent(final int index, final long sentNanos)
    {
        final Slice slice = new Slice(index);
        slice.sentNanos = sentNanos;
        assertThat(inFlight.hasRoom()).isTrue();
        final long id = inFlight.add(slice);
        assertThat(id).isEqualTo(slice.inFlightId).isPositive();
        return slice;
    }
}
