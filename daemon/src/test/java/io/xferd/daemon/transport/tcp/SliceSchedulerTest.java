package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.session.ClientSession;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order in which a connection sends what is queued on it: a prompt queued behind a long one already under way
 * gets its slices before the long one finishes, even when the long one's requests arrive a few at a time; what a flow
 * was sent is forgotten once it has been dry for long or the connection went idle; each prompt's slices keep their
 * order; nothing queued is lost or sent twice.
 */
class SliceSchedulerTest
{
    private static final long SLICE = 512 * 1024;

    private final SliceScheduler scheduler = new SliceScheduler();
    private final ClientSession prefill = session(0);
    private final ClientSession other = session(1);
    private int nextIndex;

    @Test
    void shouldSendAShortPromptArrivingBehindALongOneBeforeTheLongOneFinishes()
    {
        final RemoteTransfer longPrompt = transfer(prefill, 8192);
        final RemoteTransfer shortPrompt = transfer(prefill, 1024);
        queue(longPrompt, 0, 40);
        final List<Slice> sent = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            sent.add(scheduler.poll()); // the long prompt is under way
        }
        queue(shortPrompt, 0, 5);
        queue(longPrompt, 40, 10);

        sent.addAll(drain());

        assertThat(sent).hasSize(55).doesNotHaveDuplicates();
        assertThat(sent.subList(10, 10 + 5)).as("the short prompt's five slices go next")
            .allSatisfy(s -> assertThat(s.transfer).isSameAs(shortPrompt));
        assertThat(sent.subList(15, 55)).allSatisfy(s -> assertThat(s.transfer).isSameAs(longPrompt));
        assertInFlowOrder(sent, longPrompt);
        assertInFlowOrder(sent, shortPrompt);
    }

    @Test
    void shouldCountWhatALongPromptWasSentWhenItsRequestsArriveAFewAtATime()
    {
        // intake behind the wire: the long prompt never has more than two slices queued
        final RemoteTransfer longPrompt = transfer(prefill, 8192);
        final RemoteTransfer shortPrompt = transfer(other, 1024);
        final List<Slice> sent = new ArrayList<>();
        int longQueued = 0;
        for (int i = 0; i < 20; i++)
        {
            queue(longPrompt, longQueued, 2);
            longQueued += 2;
            sent.addAll(drain());
        }
        queue(shortPrompt, 0, 5);
        queue(longPrompt, longQueued, 2);

        final List<Slice> after = drain();

        assertThat(after.subList(0, 5)).as("the short prompt, queued whole, is smaller than the long one so far")
            .extracting(s -> s.transfer).containsOnly(shortPrompt);
        assertThat(after.subList(5, 7)).extracting(s -> s.transfer).containsOnly(longPrompt);
        sent.addAll(after);
        assertInFlowOrder(sent, longPrompt);
    }

    @Test
    void shouldForgetWhatAFlowWasSentOnceItRanDryWhileOthersWereSentMuch()
    {
        final RemoteTransfer earlier = transfer(prefill, 0);
        final RemoteTransfer busy = transfer(other, 7);
        queue(earlier, 0, 200); // 100 MiB, long ago
        drain();
        final int forgetSlices = (int)(SliceScheduler.FORGET_AFTER_BYTES / SLICE);
        queue(busy, 0, forgetSlices + 10);
        for (int i = 0; i < forgetSlices; i++)
        {
            assertThat(scheduler.poll().transfer).isSameAs(busy);
        }

        queue(earlier, 200, 1);

        assertThat(scheduler.poll().transfer).as("a new start: one slice against the busy flow's %d MiB",
            SliceScheduler.FORGET_AFTER_BYTES >> 20).isSameAs(earlier);
    }

    @Test
    void shouldRememberWhatAFlowWasSentWhileItsQueueRunsDryForAMoment()
    {
        final RemoteTransfer earlier = transfer(prefill, 3);
        final RemoteTransfer busy = transfer(other, 7);
        queue(earlier, 0, 200);
        drain();
        queue(busy, 0, 20);
        drain();

        queue(earlier, 200, 1);
        queue(busy, 20, 1);

        assertThat(scheduler.poll().transfer).as("100 MiB sent against 10 MiB: still the larger").isSameAs(busy);
    }

    @Test
    void shouldStartEveryFlowAfreshOnceTheConnectionWentIdle()
    {
        final RemoteTransfer earlier = transfer(prefill, 0);
        final RemoteTransfer later = transfer(other, 7);
        queue(earlier, 0, 200);
        drain();
        queue(later, 0, 10);
        drain();

        scheduler.forgetIdleFlows();
        queue(later, 10, 2);
        queue(earlier, 200, 1);

        assertThat(scheduler.flows()).isEqualTo(2);
        assertThat(drain()).extracting(s -> s.transfer).containsExactly(earlier, later, later);
    }

    @Test
    void shouldGiveANewFlowThePlaceOfADryOneOnceMaxFlowsWereSeen()
    {
        for (int i = 0; i < SliceScheduler.MAX_FLOWS; i++)
        {
            queue(transfer(prefill, 100 + i), 0, 1);
        }
        drain();
        assertThat(scheduler.flows()).as("dry flows are remembered").isEqualTo(SliceScheduler.MAX_FLOWS);
        final RemoteTransfer longer = transfer(other, 1);
        final RemoteTransfer shorter = transfer(other, 2);

        queue(longer, 0, 3);
        queue(shorter, 0, 1);

        assertThat(drain()).as("told apart, not one shared queue").extracting(s -> s.transfer)
            .containsExactly(shorter, longer, longer, longer);
        assertThat(scheduler.flows()).isEqualTo(SliceScheduler.MAX_FLOWS);
    }

    @Test
    void shouldLetALongPromptArrivingBehindAShortOneWaitOnlyForWhatTheShortOneHasLeft()
    {
        final RemoteTransfer shortPrompt = transfer(prefill, 1024);
        final RemoteTransfer longPrompt = transfer(other, 1024);
        queue(shortPrompt, 0, 4);
        queue(longPrompt, 0, 40);

        final List<Slice> sent = drain();

        assertThat(sent).hasSize(44);
        assertThat(sent.subList(0, 4)).as("the short one, under way, finishes first").extracting(s -> s.transfer)
            .containsOnly(shortPrompt);
        assertInFlowOrder(sent, longPrompt);
    }

    @Test
    void shouldLetALongPromptArrivingBehindAnotherLongOneTakeOnlyItsHeadStartBeforeTheFirstFinishes()
    {
        final RemoteTransfer first = transfer(prefill, 8192);
        final RemoteTransfer second = transfer(prefill, 8193);
        queue(first, 0, 200);
        final List<Slice> sent = new ArrayList<>();
        for (int i = 0; i < 100; i++)
        {
            sent.add(scheduler.poll()); // the first is half way
        }
        for (int part = 0; part < 10; part++)
        {
            queue(second, 20 * part, 20); // the client submits the second as slots free
            for (int i = 0; i < 20; i++)
            {
                sent.add(scheduler.poll());
            }
        }
        sent.addAll(drain());

        assertThat(sent).hasSize(400).doesNotHaveDuplicates();
        final int firstDone = sent.lastIndexOf(sent.stream().filter(s -> s.transfer == first).reduce((a, b) -> b)
            .orElseThrow());
        final long secondBefore = sent.subList(0, firstDone).stream().filter(s -> s.transfer == second).count();
        final int headStart = (int)(SliceScheduler.HEAD_START_BYTES / SLICE);
        // its head start, and the one slice in AGING_PERIOD that goes to whoever waited longest while the first ran
        assertThat(secondBefore).as("slices of the second sent before the first finished")
            .isBetween((long)headStart, (long)headStart + 164 / SliceScheduler.AGING_PERIOD + 1);
        assertInFlowOrder(sent, first);
        assertInFlowOrder(sent, second);
    }

    @Test
    void shouldServeALongPromptAtLeastOnceInEveryAgingPeriodWhileShortOnesKeepComing()
    {
        final RemoteTransfer longPrompt = transfer(prefill, 8192);
        queue(longPrompt, 0, 100);
        int longSlices = 0;
        final int rounds = 8 * SliceScheduler.AGING_PERIOD;
        for (int i = 0; i < rounds; i++)
        {
            queue(transfer(other, 1 + i), 0, 1); // a new one-slice prompt before every slice sent
            if (scheduler.poll().transfer == longPrompt)
            {
                longSlices++;
            }
        }

        assertThat(longSlices).as("the long prompt is not starved").isGreaterThanOrEqualTo(8);
    }

    @Test
    void shouldKeepOneOrderForRequestsWithoutATraceIdOfOneClient()
    {
        final RemoteTransfer first = transfer(prefill, 0);
        final RemoteTransfer second = transfer(prefill, 0);
        queue(first, 0, 3);
        queue(second, 0, 3);

        assertThat(drain()).extracting(s -> s.transfer)
            .containsExactly(first, first, first, second, second, second);
    }

    @Test
    void shouldRankAClientWithoutTraceIdsByWhatItHasQueuedNotByAllItWasEverSent()
    {
        final RemoteTransfer untraced = transfer(other, 0);
        queue(untraced, 0, 400); // 200 MiB over the client's life, its queue running dry now
        assertThat(drain()).hasSize(400);
        final RemoteTransfer newcomer = transfer(prefill, 8192);
        queue(newcomer, 0, 100);
        scheduler.poll();
        final RemoteTransfer next = transfer(other, 0);
        queue(next, 0, 1);

        assertThat(scheduler.poll().transfer).as("one slice queued against the newcomer's 99").isSameAs(next);
    }

    @Test
    void shouldKeepEverySliceBeyondTheFlowsItTellsApart()
    {
        final List<RemoteTransfer> prompts = new ArrayList<>();
        for (int i = 0; i < SliceScheduler.MAX_FLOWS + 10; i++)
        {
            final RemoteTransfer prompt = transfer(prefill, 100 + i);
            prompts.add(prompt);
            queue(prompt, 0, 2);
        }

        final List<Slice> sent = drain();

        assertThat(sent).hasSize(2 * prompts.size()).doesNotHaveDuplicates();
        assertThat(scheduler.isEmpty()).isTrue();
        for (final RemoteTransfer prompt : prompts)
        {
            assertInFlowOrder(sent, prompt);
        }
    }

    private List<Slice> drain()
    {
        final List<Slice> sent = new ArrayList<>();
        Slice slice;
        while ((slice = scheduler.poll()) != null)
        {
            sent.add(slice);
        }
        return sent;
    }

    private void queue(final RemoteTransfer transfer, final int firstSlice, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final Slice slice = new Slice(nextIndex++);
            slice.transfer = transfer;
            slice.offset = (firstSlice + i) * SLICE;
            slice.length = SLICE;
            scheduler.add(slice);
        }
    }

    private static void assertInFlowOrder(final List<Slice> sent, final RemoteTransfer transfer)
    {
        assertThat(sent.stream().filter(s -> s.transfer == transfer).mapToLong(s -> s.offset))
            .as("a prompt's slices keep their order").isSorted();
    }

    private static RemoteTransfer transfer(final ClientSession submitter, final long traceId)
    {
        final RemoteTransfer transfer = new RemoteTransfer();
        transfer.submitter = submitter;
        transfer.traceId = traceId;
        return transfer;
    }

    private static ClientSession session(final int slot)
    {
        return new ClientSession(slot, 1, "c" + slot, "127.0.0.1:0/c" + slot, 1, 0, 0, null, null, null,
            new ManyToOneRingBuffer(new UnsafeBuffer(ByteBuffer.allocateDirect(4096 + RingBufferDescriptor.TRAILER_LENGTH))),
            null);
    }
}
