package io.xferd.client;

import io.xferd.ipc.Doorbell;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;

/**
 * Writes requests into this client's submit ring as the next task of a batch: one {@link TransferRequest} as a
 * SUBMIT record, one {@link TransferBatch} as a SUBMIT_BATCH record answered by one completion. Waits, polling
 * completions, while the client is at the daemon's in-flight limit or the ring is full, for at most the control
 * timeout. Allocation-free; the ring has one producer, so one thread submits at a time.
 */
final class TransferSubmitter
{
    private final RingBuffer submitRing;
    private final BatchTable batches;
    private final CompletionPoller poller;
    private final DaemonLiveness liveness;
    private final NanoClock clock;
    private final IdleStrategy idle;
    private final long timeoutMs;
    private final int maxInFlight;
    private final int maxBatchEntries;
    private final SubmitRequestFlyweight requestRecord = new SubmitRequestFlyweight();
    private final SubmitBatchFlyweight batchRecord = new SubmitBatchFlyweight();
    private final UnsafeBuffer notifyView = new UnsafeBuffer(new byte[0]);
    private final Doorbell doorbell;

    TransferSubmitter(final RingBuffer submitRing, final BatchTable batches, final CompletionPoller poller,
        final DaemonLiveness liveness, final NanoClock clock, final IdleStrategy idle, final long timeoutMs,
        final int maxInFlight, final int maxBatchEntries)
    {
        this.submitRing = submitRing;
        this.batches = batches;
        this.poller = poller;
        this.liveness = liveness;
        this.clock = clock;
        this.idle = idle;
        this.timeoutMs = timeoutMs;
        this.maxInFlight = maxInFlight;
        this.maxBatchEntries = maxBatchEntries;
        this.doorbell = new Doorbell(submitRing.buffer(), RingsFileDescriptor.SUBMIT_DOORBELL_OFFSET);
    }

    /**
     * @return the task index within the batch.
     */
    int submit(final long batchId, final TransferRequest request)
    {
        liveness.checkAlive();
        final BatchTable.Batch batch = batchWithRoom(batchId);
        final byte[] notify = request.notifyMessage();
        final int notifyLength = notify == null ? 0 : notify.length;
        if (notifyLength > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH)
        {
            throw new IllegalArgumentException("notify message longer than " +
                SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + " bytes: " + notifyLength);
        }
        final int index = claimRecord(RecordTypes.SUBMIT, SubmitRequestFlyweight.recordLength(notifyLength));
        final long now = clock.nanoTime();
        final int task = batches.start(batch, now);
        final SubmitRequestFlyweight record = requestRecord.wrap(submitRing.buffer(), index)
            .clearReserved()
            .opcode(request.opcode())
            .requestId(batch.requestId(task))
            .segmentHandle(request.segment())
            .localAddress(request.localAddress())
            .targetAddress(request.targetAddress())
            .length(request.length())
            .traceId(request.traceId())
            .submitNanos(now);
        if (notifyLength > 0)
        {
            record.putNotify(notify, 0, notifyLength);
        }
        else
        {
            record.noNotify();
        }
        submitRing.commit(index);
        doorbell.ring();
        return task;
    }

    /**
     * @return the task index within the batch.
     * @throws IllegalArgumentException when the batch is empty or has more than the daemon's most entries.
     */
    int submit(final long batchId, final TransferBatch transfers)
    {
        liveness.checkAlive();
        final int entries = transfers.size();
        if (entries < 1 || entries > maxBatchEntries)
        {
            throw new IllegalArgumentException("a batch has 1.." + maxBatchEntries + " entries, not " + entries);
        }
        final BatchTable.Batch batch = batchWithRoom(batchId);
        // the daemon delivers a notify only for a WRITE: a READ's is not sent at all
        final byte[] notify = transfers.opcode() == Opcode.WRITE ? transfers.notifyMessage() : null;
        final int notifyLength = notify == null ? 0 : notify.length;
        final int index = claimRecord(RecordTypes.SUBMIT_BATCH, SubmitBatchFlyweight.bodyLength(entries, notifyLength));
        final long now = clock.nanoTime();
        final int task = batches.start(batch, now);
        if (notifyLength > 0)
        {
            notifyView.wrap(notify);
        }
        final SubmitBatchFlyweight record = batchRecord.wrap(submitRing.buffer(), index)
            .header(batch.requestId(task), transfers.opcode(), entries, transfers.segment(), transfers.traceId(), now,
                notifyView, 0, notifyLength);
        for (int i = 0; i < entries; i++)
        {
            record.entry(i, transfers.localAddress(i), transfers.targetAddress(i), transfers.length(i));
        }
        submitRing.commit(index);
        doorbell.ring();
        return task;
    }

    private BatchTable.Batch batchWithRoom(final long batchId)
    {
        final BatchTable.Batch batch = batches.batch(batchId);
        if (batch.submitted >= batch.capacity)
        {
            throw new IllegalStateException("batch " + batchId + " is full (" + batch.capacity + " tasks)");
        }
        return batch;
    }

    /**
     * Claim room for one record, polling completions while at the in-flight limit or while the ring is full.
     *
     * @return the claimed record's index, to be committed once written.
     */
    private int claimRecord(final int type, final int length)
    {
        if (batches.inFlight() < maxInFlight)
        {
            final int index = submitRing.tryClaim(type, length);
            if (index > 0)
            {
                return index; // the usual case: no clock read for a deadline that is not needed
            }
        }
        final long deadline = clock.nanoTime() + timeoutMs * 1_000_000L;
        idle.reset();
        while (true)
        {
            final int polls = poller.recordPolls();
            poller.checkOpen(); // a client closed meanwhile has its rings unmapped
            if (batches.inFlight() < maxInFlight)
            {
                final int index = submitRing.tryClaim(type, length);
                if (index > 0)
                {
                    return index;
                }
            }
            final int work = poller.poll();
            if (work == 0)
            {
                liveness.checkAtNextEmptyPoll(); // a waiter idles between polls: look at the clock at each
            }
            if (batches.inFlight() >= maxInFlight)
            {
                poller.idle(work, polls, deadline); // room comes with a completion: the doorbell rings for it
            }
            else
            {
                idle.idle(work); // a full submit ring frees as the daemon reads it, which rings nothing here
            }
            liveness.checkAlive();
            if (clock.nanoTime() - deadline > 0)
            {
                throw new XferException("could not submit " + (type == RecordTypes.SUBMIT ? "a request" : "a batch") +
                    " within " + timeoutMs + " ms: submit ring full or " + batches.inFlight() +
                    " requests in flight");
            }
        }
    }
}
