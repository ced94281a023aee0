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
        final RemoteTransfer earlier = transfer(prefill, 3); // traced: its queue running dry alone forgets nothing
        final RemoteTransfer later = transfer(other, 7);
        queue(earlier, 0, 200);
        drain();
        queue(later, 0, 10);
        drain();

        scheduler.forgetIdleFlows();
        queue(later, 10, SliceScheduler.SHORTER_FACTOR);
        queue(earlier, 200, 1);

        assertThat(scheduler.flows()).isEqualTo(2);
        assertThat(drain()).extracting(s -> s.transfer).startsWith(earlier, later)
            .hasSize(SliceScheduler.SHORTER_FACTOR + 1);
    }

    @Test
    void shouldGiveANewFlowThePlaceOfADryOneOnceMaxFlowsWereSeen()
    {
        for (int i = 0; i < SliceScheduler.MAX_FLOWS; i++)
        {
            queue(transfer(session(2 + i), 100 + i), 0, 1); // a client each: every place busy at once
        }
        drain();
        assertThat(scheduler.flows()).as("dry flows are remembered").isEqualTo(SliceScheduler.MAX_FLOWS);
        final RemoteTransfer longer = transfer(other, 1);
        final RemoteTransfer shorter = transfer(other, 2);

        queue(longer, 0, SliceScheduler.SHORTER_FACTOR);
        queue(shorter, 0, 1);

        final List<Slice> sent = drain();
        assertThat(sent).as("told apart, not one shared queue").extracting(s -> s.transfer)
            .startsWith(shorter, longer).hasSize(SliceScheduler.SHORTER_FACTOR + 1);
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
    void shouldLetALongPromptArrivingBehindAnotherLongOneTakeLittleOfItBeforeTheFirstFinishes()
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
        // while it is at most a quarter of the first or short (SHORT_BYTES), and the one slice in AGING_PERIOD that
        // goes to whoever waited longest while the first ran
        assertThat(secondBefore).as("slices of the second sent before the first finished")
            .isBetween(1L, Math.max(200L / SliceScheduler.SHORTER_FACTOR, SliceScheduler.SHORT_BYTES / SLICE) +
                164 / SliceScheduler.AGING_PERIOD + 1);
        assertInFlowOrder(sent, first);
        assertInFlowOrder(sent, second);
    }

    @Test
    void shouldSendAShortPromptBehindALongOneFirstWhateverTheModelsBytesPerToken()
    {
        // a Llama-3-8B-sized model (128 KiB a token) over two connections: 8K tokens are 512 MiB on this one, 1K 64 MiB
        final int longSlices = (int)((512L << 20) / SLICE);
        final int shortSlices = (int)((64L << 20) / SLICE);
        final RemoteTransfer longPrompt = transfer(prefill, 8192);
        final RemoteTransfer shortPrompt = transfer(other, 1024);
        queue(longPrompt, 0, longSlices);
        for (int i = 0; i < 100; i++)
        {
            scheduler.poll();
        }
        queue(shortPrompt, 0, shortSlices);

        final List<Slice> sent = drain();

        final int shortDone = sent.lastIndexOf(sent.stream().filter(s -> s.transfer == shortPrompt)
            .reduce((a, b) -> b).orElseThrow());
        assertThat(shortDone + 1).as("polls until the short prompt's last slice: its own and the aging slices")
            .isLessThanOrEqualTo(shortSlices + shortSlices / SliceScheduler.AGING_PERIOD + 1);
    }

    @Test
    void shouldLetANewerPromptThroughAFlowThatNeverEnds()
    {
        // a client without trace ids keeps its queue filled: one flow for the client's life
        final RemoteTransfer stream = transfer(other, 0);
        final int quantum = (int)(SliceScheduler.RENEW_AFTER_BYTES / SLICE);
        final RemoteTransfer prompt = transfer(prefill, 8192);
        queue(stream, 0, 2);
        queue(prompt, 0, quantum);

        int streamed = 2;
        int promptSent = 0;
        int polls = 0;
        while (promptSent < quantum && polls < 40 * quantum)
        {
            queue(stream, streamed++, 1);
            if (scheduler.poll().transfer == prompt)
            {
                promptSent++;
            }
            polls++;
        }

        // the stream keeps its place for at most a quantum, then the prompt goes (but for the aging slices)
        assertThat(polls).as("polls until the prompt's %d slices were sent", quantum)
            .isLessThanOrEqualTo(2 * quantum + 2 * quantum / SliceScheduler.AGING_PERIOD + 2);
    }

    @Test
    void shouldPutAClientWithoutTraceIdsBehindOlderFlowsOnceItsQueueRanDry()
    {
        // each of its requests runs its queue dry: a new start, and a newcomer, not the oldest flow for ever
        final RemoteTransfer untraced = transfer(other, 0);
        final RemoteTransfer prompt = transfer(prefill, 8192);
        final int batch = 150;
        final int promptSlices = 400;
        queue(untraced, 0, batch);
        int untracedQueued = batch - 1;
        scheduler.poll();
        queue(prompt, 0, promptSlices);

        int promptSent = 0;
        int polls = 0;
        int untracedSlices = batch;
        while (promptSent < promptSlices && polls < 40 * promptSlices)
        {
            if (untracedQueued == 0)
            {
                queue(untraced, untracedSlices, batch);
                untracedSlices += batch;
                untracedQueued = batch;
            }
            if (scheduler.poll().transfer == prompt)
            {
                promptSent++;
            }
            else
            {
                untracedQueued--;
            }
            polls++;
        }

        assertThat(polls).as("polls until the prompt's %d slices were sent", promptSlices)
            .isLessThanOrEqualTo(2 * promptSlices);
    }

    @Test
    void shouldTellAnotherClientsNewFlowApartWhileOneClientKeepsEveryTraceIdQueued()
    {
        final List<RemoteTransfer> flood = new ArrayList<>();
        for (int i = 0; i < SliceScheduler.MAX_FLOWS; i++)
        {
            final RemoteTransfer prompt = transfer(prefill, 100 + i);
            flood.add(prompt);
            queue(prompt, 0, 2 * SliceScheduler.SHORTER_FACTOR);
        }
        final RemoteTransfer shortPrompt = transfer(other, 7);

        queue(shortPrompt, 0, 1);

        assertThat(scheduler.flows()).as("one client holds at most its share of the flows")
            .isEqualTo(SliceScheduler.MAX_FLOWS_PER_CLIENT + 1);
        final List<Slice> sent = drain();
        assertThat(sent.get(0).transfer).as("its own flow, not a place in the flooding client's queue")
            .isSameAs(shortPrompt);
        assertThat(sent).hasSize(2 * SliceScheduler.SHORTER_FACTOR * flood.size() + 1).doesNotHaveDuplicates();
        for (final RemoteTransfer prompt : flood)
        {
            assertInFlowOrder(sent, prompt);
        }
    }

    @Test
    void shouldKeepAPlaceForAnotherClientWhileFourSessionsOfOneUserKeepEveryTraceIdQueued()
    {
        final List<RemoteTransfer> flood = new ArrayList<>();
        for (int s = 0; s < SliceScheduler.MAX_FLOWS / SliceScheduler.MAX_FLOWS_PER_CLIENT; s++)
        {
            final ClientSession session = session(2 + s);
            for (int i = 0; i < SliceScheduler.MAX_FLOWS_PER_CLIENT + 2; i++)
            {
                final RemoteTransfer prompt = transfer(session, 100 + i);
                flood.add(prompt);
                queue(prompt, 0, 2 * SliceScheduler.SHORTER_FACTOR);
            }
        }
        final RemoteTransfer shortPrompt = transfer(other, 7);

        queue(shortPrompt, 0, 1);

        final List<Slice> sent = drain();
        assertThat(sent.get(0).transfer).as("its own flow, not a place in a flooding session's queue")
            .isSameAs(shortPrompt);
        assertThat(scheduler.flows()).as("the sessions left places free").isLessThan(SliceScheduler.MAX_FLOWS);
        assertThat(sent).hasSize(2 * SliceScheduler.SHORTER_FACTOR * flood.size() + 1).doesNotHaveDuplicates();
        for (final RemoteTransfer prompt : flood)
        {
            assertInFlowOrder(sent, prompt);
        }
    }

    @Test
    void shouldKeepAPromptThatFoundNoPlaceInOneFlowWhenAPlaceFreesUp()
    {
        final int flows = SliceScheduler.MAX_FLOWS_PER_CLIENT;
        for (int i = 0; i < flows; i++)
        {
            queue(transfer(prefill, 100 + i), 0, i == flows - 1 ? 40 : 1);
        }
        final RemoteTransfer beyond = transfer(prefill, 999);
        queue(beyond, 0, 1); // every place of its client busy: it joins the newest, behind its 40 slices
        final List<Slice> sent = new ArrayList<>();
        sent.add(scheduler.poll()); // the oldest prompt's only slice: its place is free now

        queue(beyond, 1, 1);

        sent.addAll(drain());
        assertThat(sent).hasSize(flows - 1 + 40 + 2).doesNotHaveDuplicates();
        assertInFlowOrder(sent, beyond);
    }

    @Test
    void shouldKeepAPromptInAnotherClientsFlowWhileItHasSlicesThereWhenMoreClientsAreBusyThanPlaces()
    {
        for (int i = 0; i < SliceScheduler.MAX_FLOWS; i++)
        {
            queue(transfer(session(2 + i), 100 + i), 0, i == 0 ? 1 : 40);
        }
        final RemoteTransfer beyond = transfer(other, 999);
        queue(beyond, 0, 1); // every place busy, none of them its client's: it joins another client's flow
        final List<Slice> sent = new ArrayList<>();
        sent.add(scheduler.poll()); // the oldest prompt's only slice: its place is free now

        queue(beyond, 1, 1);

        sent.addAll(drain());
        assertThat(sent).hasSize(1 + 40 * (SliceScheduler.MAX_FLOWS - 1) + 2).doesNotHaveDuplicates();
        assertInFlowOrder(sent, beyond);
    }

    @Test
    void shouldGiveAGuestItsOwnPlaceOnceItsSlicesLeftAHostFlowThatNeverRunsDry()
    {
        // every place busy: 63 one-slice prompts of other clients and a client without trace ids that streams
        for (int i = 0; i < SliceScheduler.MAX_FLOWS - 1; i++)
        {
            queue(transfer(session(2 + i), 100 + i), 0, 1);
        }
        final RemoteTransfer stream = transfer(session(70), 0);
        final int backlog = 200;
        queue(stream, 0, backlog);
        int streamed = backlog;
        final RemoteTransfer first = transfer(other, 7);
        queue(first, 0, 1); // no place: it joins the stream's flow, the newest, behind its backlog

        int polls = 0;
        while (polls < 4 * backlog && scheduler.poll().transfer != first)
        {
            queue(stream, streamed++, 1); // the stream's queue never runs dry
            polls++;
        }
        assertThat(polls).as("the guest's slice was sent").isLessThan(4 * backlog);
        queue(stream, streamed++, 1);
        final RemoteTransfer next = transfer(other, 8);
        queue(next, 0, 1);

        final List<Slice> sent = List.of(scheduler.poll(), scheduler.poll());
        assertThat(sent).extracting(s -> s.transfer).as("its own flow, short first (but for an aging slice)")
            .contains(next);
    }

    @Test
    void shouldNotTakeOverAnotherClientsGuestMarkWhileAFlowWithoutGuestsIsBusy()
    {
        final List<RemoteTransfer> prompts = new ArrayList<>();
        for (int i = 0; i < SliceScheduler.MAX_FLOWS; i++)
        {
            final RemoteTransfer prompt = transfer(session(2 + i), 100 + i);
            prompts.add(prompt);
            queue(prompt, 0, 40);
        }
        final ClientSession newest = prompts.getLast().submitter;
        final RemoteTransfer guest = transfer(other, 7);
        queue(guest, 0, 1); // every place busy: it joins the newest flow
        final RemoteTransfer newestsNext = transfer(newest, 500);
        queue(newestsNext, 0, 1); // no place, and its own flow hosts the guest: it joins another flow

        queue(guest, 1, 1);

        final List<Slice> sent = drain();
        assertThat(sent).hasSize(40 * SliceScheduler.MAX_FLOWS + 3).doesNotHaveDuplicates();
        assertInFlowOrder(sent, guest);
    }

    @Test
    void shouldLetEightClientsBusyEveryPlaceAndKeepANinthClientsPromptInOrder()
    {
        // clients one after another take 16, 16, 16, 8, 4, 2, 1, 1 places: the class comment's limit of the rule
        final List<RemoteTransfer> flood = new ArrayList<>();
        for (int s = 0; s < 8; s++)
        {
            final ClientSession session = session(2 + s);
            for (int i = 0; i < SliceScheduler.MAX_FLOWS_PER_CLIENT + 2; i++)
            {
                final RemoteTransfer prompt = transfer(session, 100 + i);
                flood.add(prompt);
                queue(prompt, 0, 2);
            }
        }
        assertThat(scheduler.flows()).isEqualTo(SliceScheduler.MAX_FLOWS);
        final RemoteTransfer ninth = transfer(other, 7);

        queue(ninth, 0, 3); // no place is left for it: it shares a busy flow

        final List<Slice> sent = drain();
        assertThat(sent).hasSize(2 * flood.size() + 3).doesNotHaveDuplicates();
        assertInFlowOrder(sent, ninth);
        for (final RemoteTransfer prompt : flood)
        {
            assertInFlowOrder(sent, prompt);
        }
    }

    @Test
    void shouldNotCountADepartedSessionsFlowsAsTheNewSessionsInItsSlot()
    {
        final ClientSession departed = session(5, 1);
        for (int i = 0; i < SliceScheduler.MAX_FLOWS_PER_CLIENT + 1; i++)
        {
            queue(transfer(departed, 100 + i), 0, 40); // the last one finds no place: a guest in its own newest flow
        }
        final RemoteTransfer newcomer = transfer(session(5, 2), 100 + SliceScheduler.MAX_FLOWS_PER_CLIENT);

        queue(newcomer, 0, 1); // the slot reused while the departed session's slices are still queued

        assertThat(scheduler.poll().transfer).as("its own flow, short first, not the departed client's host")
            .isSameAs(newcomer);
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

    @Test
    void shouldSendAShortPromptFirstBehindALongOneThatIsNotYetFourTimesItsSize()
    {
        // the long prompt's requests arrive a few at a time: 20 ms after it started it has 40 MiB so far, the 1K-token
        // prompt (28 MiB on this connection) arrives whole
        final RemoteTransfer longPrompt = transfer(prefill, 8192);
        final RemoteTransfer shortPrompt = transfer(other, 1024);
        queue(longPrompt, 0, 80);
        final List<Slice> sent = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            sent.add(scheduler.poll());
        }
        queue(shortPrompt, 0, 56);
        queue(longPrompt, 80, 40);

        sent.addAll(drain());

        assertThat(lastIndexOf(sent, shortPrompt)).as("the short prompt next, but for the aging slices")
            .isLessThan(10 + 56 + 56 / 16);
        assertInFlowOrder(sent, longPrompt);
    }

    @Test
    void shouldSendTheShortestOfThreePromptsFirstWhereverTheirFlowsSit()
    {
        // 224, 100 and 40 MiB: two at a time the rule goes round (40 before 224 before 100 before 40); the pick must
        // not depend on the places the flows hold, which a flow that ran dry and was forgotten reshuffles
        final RemoteTransfer dry = transfer(other, 1);
        final RemoteTransfer longest = transfer(prefill, 2);
        final RemoteTransfer middle = transfer(prefill, 3);
        final RemoteTransfer shortest = transfer(prefill, 4);
        queue(dry, 0, 2);
        queue(longest, 0, 448);
        queue(middle, 0, 200);
        queue(shortest, 0, 80);
        assertThat(scheduler.poll().transfer).isSameAs(dry);
        assertThat(scheduler.poll().transfer).isSameAs(dry);
        scheduler.forgetIdleFlows(); // the shortest, last, takes the dry flow's first place

        final List<Slice> sent = drain();

        assertThat(sent).hasSize(448 + 200 + 80);
        final int shortestDone = lastIndexOf(sent, shortest);
        assertThat(shortestDone).as("the shortest goes first, but for the aging slices").isLessThan(80 + 80 / 16);
        assertThat(sent.subList(0, lastIndexOf(sent, longest)).stream().filter(s -> s.transfer == middle).count())
            .as("the older long prompt then finishes before the middle one, but for the aging slices")
            .isLessThanOrEqualTo((448 + 80) / SliceScheduler.AGING_PERIOD + 1);
    }

    @Test
    void shouldKeepTheOlderFirstBetweenPromptsOfLikeSizeAroundTheShortSize()
    {
        // 33 MiB queued, then 32 MiB prompts one after another: neither is much shorter than the other
        final RemoteTransfer older = transfer(prefill, 1);
        queue(older, 0, 66);
        final RemoteTransfer newer = transfer(other, 2);
        queue(newer, 0, 64);

        final List<Slice> sent = drain();

        assertThat(lastIndexOf(sent, older)).as("the older first, but for the aging slices")
            .isLessThan(66 + 66 / 16);
    }

    @Test
    void shouldFollowEverShorterNewerPromptsToTheShortest()
    {
        // arriving largest first, each a quarter of the one before: the last, shortest, goes first
        final int[] slices = {512, 128, 32, 8, 2};
        final RemoteTransfer[] prompts = new RemoteTransfer[slices.length];
        for (int i = 0; i < slices.length; i++)
        {
            prompts[i] = transfer(i % 2 == 0 ? prefill : other, 10 + i);
            queue(prompts[i], 0, slices[i]);
        }

        final List<Slice> sent = drain();

        assertThat(sent.subList(0, 2)).extracting(s -> s.transfer).containsOnly(prompts[4]);
        assertThat(sent.subList(2, 10)).extracting(s -> s.transfer).containsOnly(prompts[3]);
    }

    @Test
    void shouldSendEmptyFlowsOldestFirst()
    {
        // notifications only (slices of no bytes), of three prompts: alike, so the older first
        final RemoteTransfer[] prompts = {transfer(prefill, 21), transfer(prefill, 22), transfer(other, 23)};
        for (final RemoteTransfer prompt : prompts)
        {
            final Slice notify = new Slice(nextIndex++);
            notify.transfer = prompt;
            notify.length = 0;
            scheduler.add(notify);
        }

        assertThat(drain()).extracting(s -> s.transfer).containsExactly(prompts);
    }

    @Test
    void shouldServeALongPromptAtLeastOnceInEveryAgingPeriodWhileShorterOnesKeepComing()
    {
        final RemoteTransfer longPrompt = transfer(prefill, 1);
        queue(longPrompt, 0, 400);
        int longSent = 0;
        long nextTrace = 100;
        RemoteTransfer shortPrompt = null;
        final int polls = 20 * SliceScheduler.AGING_PERIOD;
        for (int i = 0; i < polls; i++)
        {
            if (shortPrompt == null || scheduler.size() == 400 - longSent)
            {
                // a new short prompt (a fortieth of the long one) whenever the last one has gone
                shortPrompt = transfer(other, nextTrace++);
                queue(shortPrompt, 0, 10);
            }
            longSent += scheduler.poll().transfer == longPrompt ? 1 : 0;
        }

        assertThat(longSent).as("only the aging slices, but every one of them")
            .isEqualTo(polls / SliceScheduler.AGING_PERIOD);
    }

    private static int lastIndexOf(final List<Slice> sent, final RemoteTransfer transfer)
    {
        int last = -1;
        for (int i = 0; i < sent.size(); i++)
        {
            if (sent.get(i).transfer == transfer)
            {
                last = i;
            }
        }
        return last;
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
        return session(slot, 1);
    }

    private static ClientSession session(final int slot, final int generation)
    {
        return new ClientSession(slot, generation, "c" + slot, "127.0.0.1:0/c" + slot, 1, 0, 0, null, null, null,
            new ManyToOneRingBuffer(new UnsafeBuffer(ByteBuffer.allocateDirect(4096 + RingBufferDescriptor.TRAILER_LENGTH))),
            null);
    }
}
