package io.xferd.daemon.session;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link CompletionSender} does with a client that stops reading its completion ring: the client is queued once
 * for the conductor to cut off, however many completions still fail to fit, so that the bounded queue keeps room for
 * every other client's cut-off.
 */
class CompletionSenderTest
{
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(1024);
    private final CompletionSender sender = new CompletionSender(disconnects, counters);

    @Test
    void shouldQueueAClientThatOverranItsCompletionRingOnceSoAnotherClientsCutOffStillFits()
    {
        final TestClient flooded = new TestClient(0, "flooded", 4096, 0);
        final TestClient broken = new TestClient(1, "broken", 4096, 0);

        // 64 KiB of completion ring holds ~1,300 completions: the rest, 1,700 more than the queue holds, do not fit
        for (int i = 0; i < 5_000; i++)
        {
            sender.complete(flooded.session, i, TransferStatus.OK, 64, 0, 0);
        }
        sender.cutOff(broken.session, "its submit ring broke the protocol");
        sender.cutOff(broken.session, "and again");

        assertThat(disconnects.size()).isEqualTo(2);
        assertThat(disconnects.poll()).isSameAs(flooded.session);
        assertThat(disconnects.poll()).isSameAs(broken.session);
        assertThat(broken.session.protocolViolation()).isEqualTo("its submit ring broke the protocol");
    }

    @Test
    void shouldOfferAClientAgainWhenTheQueueWasFullTheFirstTime()
    {
        final ManyToOneConcurrentArrayQueue<ClientSession> small = new ManyToOneConcurrentArrayQueue<>(2);
        final CompletionSender sender = new CompletionSender(small, counters);
        final TestClient first = new TestClient(0, "first", 4096, 0);
        final TestClient second = new TestClient(1, "second", 4096, 0);
        final TestClient third = new TestClient(2, "third", 4096, 0);
        sender.cutOff(first.session, "one");
        sender.cutOff(second.session, "two");

        sender.cutOff(third.session, "three"); // the queue is full: refused
        assertThat(small.size()).isEqualTo(2);

        assertThat(small.poll()).isSameAs(first.session); // the conductor takes one
        sender.cutOff(third.session, "three, again");
        assertThat(small.poll()).isSameAs(second.session);
        assertThat(small.poll()).as("queued by the caller after the refusal").isSameAs(third.session);
    }
}
