package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.CoalescedRequests;
import io.xferd.ipc.SubmitRequestFlyweight;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One request as it moves through the daemon's pipeline: a pre-allocated Disruptor event, overwritten in place
 * by intake and read by a transfer worker. Holds the submitter's session borrowed (see
 * {@link io.xferd.daemon.memory.RefCounted}) until its completion is written.
 */
public final class TransferCommand
{
    ClientSession submitter;
    long requestId;
    int opcode;
    long segmentHandle;
    long localAddress;
    long targetAddress;
    long length;
    long traceId;
    long submitNanos;
    long intakeNanos;
    int notifyLength;
    /** Non-zero: intake already knows the request fails with this status (nothing is moved). */
    int refusal;
    /** The batch this request is an entry of, or null for a SUBMIT. */
    BatchTracker batch;
    int batchEntry;
    final UnsafeBuffer notify = new UnsafeBuffer(new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH]);
    /** The requests this command carries when intake merged adjacent ones; empty for a command of one request. */
    final CoalescedRequests members = new CoalescedRequests();
    /** The small local requests this command carries when intake gathered them, else {@link LocalRun#NONE}. */
    LocalRun run = LocalRun.NONE;

    void clear()
    {
        members.clear();
        run.recycle();
        run = LocalRun.NONE;
        submitter = null;
        batch = null;
        refusal = 0;
        notifyLength = 0;
    }

    /**
     * Take over a single request of {@code from} (a held SUBMIT going to the pipeline after all): no batch, no notify.
     */
    void copyRequestFrom(final TransferCommand from)
    {
        submitter = from.submitter;
        batch = null;
        requestId = from.requestId;
        opcode = from.opcode;
        segmentHandle = from.segmentHandle;
        localAddress = from.localAddress;
        targetAddress = from.targetAddress;
        length = from.length;
        traceId = from.traceId;
        submitNanos = from.submitNanos;
        intakeNanos = from.intakeNanos;
        refusal = 0;
        notifyLength = 0;
    }

    public ClientSession submitter()
    {
        return submitter;
    }

    public long requestId()
    {
        return requestId;
    }

    public long length()
    {
        return length;
    }
}
