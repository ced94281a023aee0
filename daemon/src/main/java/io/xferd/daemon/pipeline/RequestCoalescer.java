package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.CoalescedRequests;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.ipc.Opcode;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Intake's merging of adjacent requests into one transfer: a request to another daemon's segment is held open (its
 * pipeline sequence claimed, not yet published) while the next requests intake reads from the same client in the
 * same turn continue it: same opcode, segment and trace id, local and target ranges both starting where the open
 * one ends, no notify, up to {@code limit} bytes and {@link CoalescedRequests#MAX_MEMBERS} requests. A KV cache
 * laid out block after block then crosses the network as slices of the slice size, not one small frame per block.
 * <p>
 * It merges by addresses only; the worker checks that the merged ranges lie in one local region and one of the
 * peer's buffers, and moves the members one by one when they do not. Only the last command intake claimed may
 * grow, and only until the end of the client's pass, when intake publishes the pass's commands: merging never
 * waits for requests that are not already in the ring. Intake thread only.
 */
final class RequestCoalescer
{
    private final long limit;
    private final AtomicCounter coalesced;
    private TransferCommand open;

    /**
     * @param limit the most bytes one merged transfer carries (the transport's slice size); 0 merges nothing.
     * @param coalesced counts the requests that rode in another request's transfer.
     */
    RequestCoalescer(final long limit, final AtomicCounter coalesced)
    {
        this.limit = limit;
        this.coalesced = coalesced;
    }

    /**
     * Add a request to the open command when it continues it.
     *
     * @return true when the request now rides in the open command (nothing else to publish for it).
     */
    boolean tryAppend(final ClientSession submitter, final int opcode, final long segmentHandle,
        final long localAddress, final long targetAddress, final long length, final long traceId,
        final long requestId, final BatchTracker batch, final int batchEntry, final long submitNanos,
        final long intakeNanos)
    {
        final TransferCommand command = open;
        if (command == null || command.submitter != submitter || command.opcode != opcode ||
            command.segmentHandle != segmentHandle || command.traceId != traceId || length <= 0 ||
            length > limit - command.length || command.localAddress + command.length != localAddress ||
            command.targetAddress + command.length != targetAddress || command.members.isFull())
        {
            return false;
        }
        final CoalescedRequests members = command.members;
        if (members.count() == 0)
        {
            members.add(command.requestId, command.batch, command.batchEntry, command.length, command.submitNanos,
                command.intakeNanos);
            coalesced.increment();
        }
        members.add(requestId, batch, batchEntry, length, submitNanos, intakeNanos);
        coalesced.increment();
        command.length += length;
        return true;
    }

    /**
     * @return true while a command is held open (a request may continue it).
     */
    boolean isOpen()
    {
        return open != null;
    }

    /**
     * A command intake just filled in (claimed, not yet published): held open when later requests may continue it.
     */
    void offer(final TransferCommand command)
    {
        open = mayGrow(command) ? command : null;
    }

    /**
     * No request continues the open command any more: intake claims another sequence, or publishes its pass.
     */
    void close()
    {
        open = null;
    }

    private boolean mayGrow(final TransferCommand command)
    {
        return limit > 0 && command.submitter != null && command.refusal == 0 && command.notifyLength == 0 &&
            (command.opcode == Opcode.READ || command.opcode == Opcode.WRITE) &&
            RemoteSegments.isRemote(command.segmentHandle) && command.length > 0 && command.length < limit;
    }
}
