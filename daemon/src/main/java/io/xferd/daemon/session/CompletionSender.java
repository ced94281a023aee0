package io.xferd.daemon.session;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.NotificationFlyweight;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Writes completion and notification records into a client's own completion ring. A completion always has
 * room while the client keeps to its in-flight limit; a client whose ring is full anyway broke that contract
 * and is disconnected. A notification that does not fit is dropped and counted: only the slow client loses.
 * After each record it rings the client's completion doorbell (a client asleep on it wakes).
 * One instance per worker thread (flyweights are not shared).
 */
public final class CompletionSender
{
    private final CompletionFlyweight completion = new CompletionFlyweight();
    private final NotificationFlyweight notification = new NotificationFlyweight();
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects;
    private final AtomicCounter notificationsDelivered;
    private final AtomicCounter notificationsDropped;
    private final AtomicCounter requestsFailed;

    public CompletionSender(
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects, final SystemCounters counters)
    {
        this.disconnects = disconnects;
        this.notificationsDelivered = counters.get(SystemCounter.NOTIFICATIONS_DELIVERED);
        this.notificationsDropped = counters.get(SystemCounter.NOTIFICATIONS_DROPPED);
        this.requestsFailed = counters.get(SystemCounter.REQUESTS_FAILED);
    }

    /**
     * A sender for another thread, writing to the same disconnect queue and counters.
     */
    public CompletionSender(final CompletionSender other)
    {
        this.disconnects = other.disconnects;
        this.notificationsDelivered = other.notificationsDelivered;
        this.notificationsDropped = other.notificationsDropped;
        this.requestsFailed = other.requestsFailed;
    }

    /**
     * Queue a client for the conductor to cut off, for a reason its log line gives. Any thread.
     */
    public void cutOff(final ClientSession session, final String reason)
    {
        session.protocolViolation(reason);
        session.queueCutOff(disconnects);
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
            session.queueCutOff(disconnects);
            return;
        }
        completion.wrap(ring.buffer(), index)
            .requestId(requestId)
            .status(status)
            .bytesTransferred(bytes)
            .intakeNanos(intakeNanos)
            .completeNanos(completeNanos);
        ring.commit(index);
        session.ringCompletionDoorbell();
    }

    /**
     * End one request: a SUBMIT's completion goes out at once; a batch entry is counted into its batch, and the
     * entry that ends the batch sends the batch's single completion (and its notify, when the target is local and
     * every entry landed). Any thread; allocation-free.
     */
    public void complete(
        final ClientSession session,
        final BatchTracker batch,
        final int batchEntry,
        final long requestId,
        final int status,
        final long bytes,
        final long intakeNanos,
        final long completeNanos)
    {
        if (batch == null)
        {
            complete(session, requestId, status, bytes, intakeNanos, completeNanos);
            return;
        }
        switch (batch.entryDone(batchEntry, status, bytes))
        {
            case BatchTracker.FINISHED -> finishBatch(batch, completeNanos);
            case BatchTracker.FINISHED_WITHOUT_HELD -> finishWithoutHeld(batch, completeNanos);
            case BatchTracker.RELEASE_HELD -> batch.releaseHeld();
            default ->
            {
            }
        }
    }

    /**
     * End {@code count} entries of one batch together (a worker's run of them): one count into the batch, and the
     * batch's completion when they were its last. Any thread; allocation-free.
     *
     * @param failedEntry  the lowest index among them that failed with {@code failedStatus}; ignored when none did.
     * @param failedStatus OK when every one of them moved all its bytes.
     */
    public void completeEntries(final BatchTracker batch, final int count, final int failedEntry,
        final int failedStatus, final long bytes, final long completeNanos)
    {
        switch (batch.entriesDone(count, failedEntry, failedStatus, bytes))
        {
            case BatchTracker.FINISHED -> finishBatch(batch, completeNanos);
            case BatchTracker.FINISHED_WITHOUT_HELD -> finishWithoutHeld(batch, completeNanos);
            case BatchTracker.RELEASE_HELD -> batch.releaseHeld();
            default ->
            {
            }
        }
    }

    private void finishWithoutHeld(final BatchTracker batch, final long completeNanos)
    {
        // counted submitted with its batch: so that submitted = completed + failed (intake sleeps only then)
        requestsFailed.increment();
        finishBatch(batch, completeNanos);
    }

    private void finishBatch(final BatchTracker batch, final long completeNanos)
    {
        final int status = batch.status();
        final ClientSession target = batch.localTarget;
        if (status == TransferStatus.OK && batch.opcode == Opcode.WRITE && batch.notifyLength > 0 && target != null &&
            !target.isClosed() && target.tryAcquire())
        {
            try
            {
                notify(target, batch.traceId, batch.submitter.segmentNameUtf8(), batch.notify, batch.notifyLength);
            }
            finally
            {
                target.release();
            }
        }
        complete(batch.submitter, batch.requestId, status, batch.bytesTransferred(), batch.intakeNanos, completeNanos);
        batch.recycle();
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
        receiver.ringCompletionDoorbell();
        notificationsDelivered.increment();
    }
}
