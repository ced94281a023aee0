package io.xferd.daemon.pipeline;

import io.xferd.daemon.SystemCounters;
import io.xferd.daemon.ipc.ClientSession;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.NotificationFlyweight;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SystemCounter;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Writes completion and notification records into a client's own completion ring. A completion always has
 * room while the client keeps to its in-flight limit; a client whose ring is full anyway broke that contract
 * and is disconnected. A notification that does not fit is dropped and counted: only the slow client loses.
 * One instance per worker thread (flyweights are not shared).
 */
public final class CompletionSender
{
    private final CompletionFlyweight completion = new CompletionFlyweight();
    private final NotificationFlyweight notification = new NotificationFlyweight();
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects;
    private final AtomicCounter notificationsDelivered;
    private final AtomicCounter notificationsDropped;

    public CompletionSender(
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects, final SystemCounters counters)
    {
        this.disconnects = disconnects;
        this.notificationsDelivered = counters.get(SystemCounter.NOTIFICATIONS_DELIVERED);
        this.notificationsDropped = counters.get(SystemCounter.NOTIFICATIONS_DROPPED);
    }

    public void complete(
        final ClientSession session,
        final long requestId,
        final int status,
        final long bytes,
        final long intakeNanos,
        final long completeNanos)
    {
        final ManyToOneRingBuffer ring = session.completionRing();
        final int index = ring.tryClaim(RecordTypes.COMPLETION, CompletionFlyweight.LENGTH);
        if (index < 0)
        {
            disconnects.offer(session);
            return;
        }
        completion.wrap(ring.buffer(), index)
            .requestId(requestId)
            .status(status)
            .bytesTransferred(bytes)
            .intakeNanos(intakeNanos)
            .completeNanos(completeNanos);
        ring.commit(index);
    }

    public void notify(
        final ClientSession receiver,
        final long traceId,
        final byte[] sourceName,
        final DirectBuffer message,
        final int messageLength)
    {
        final ManyToOneRingBuffer ring = receiver.completionRing();
        final int index = ring.tryClaim(
            RecordTypes.NOTIFICATION, NotificationFlyweight.recordLength(sourceName.length, messageLength));
        if (index < 0)
        {
            notificationsDropped.increment();
            return;
        }
        notification.wrap(ring.buffer(), index).encode(traceId, sourceName, message, 0, messageLength);
        ring.commit(index);
        notificationsDelivered.increment();
    }
}
