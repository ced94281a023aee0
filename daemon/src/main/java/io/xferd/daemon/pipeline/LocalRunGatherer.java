package io.xferd.daemon.pipeline;

import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SubmitBatchFlyweight;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Intake's gathering of small local requests into one pipeline command ({@link LocalRun}): a command intake just
 * filled for a small READ or WRITE to a segment of this daemon is held open (claimed, not yet published) while the
 * next requests intake reads from the same client in the same pass ride in it: same segment and opcode, no notify,
 * each at most {@link LocalRun#MAX_MEMBER_LENGTH} bytes. Unlike {@link RequestCoalescer} the addresses need not be
 * adjacent: the worker copies each member on its own. Only the last command claimed may grow, and only until the
 * end of the client's pass: gathering never waits for requests that are not already in the ring. A command that
 * stays alone carries no run and goes as before. The members of a run are journaled by the worker (a batch's entries
 * in a run as one SUBMITTED and one COMPLETED record, not two per entry); a gatherable command's own SUBMITTED record
 * waits until it is known to stay alone ({@link #close()}). Intake thread only.
 */
final class LocalRunGatherer
{
    /** Runs in flight at most; past them, small local requests go one command each until runs come back. */
    static final int RUNS = 8;

    private final ManyToOneConcurrentArrayQueue<LocalRun> pool = new ManyToOneConcurrentArrayQueue<>(RUNS);
    private final TransferJournal journal;
    private TransferCommand open;
    /** True while the open command is intake's own, run inline: the worker journals it even when it stays alone. */
    private boolean openIsHeld;

    LocalRunGatherer(final TransferJournal journal)
    {
        this.journal = journal;
        for (int i = 0; i < RUNS; i++)
        {
            pool.offer(new LocalRun(pool));
        }
    }

    /**
     * Add a request to the open command when it may ride in it.
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
            command.segmentHandle != segmentHandle || length <= 0 || length > LocalRun.MAX_MEMBER_LENGTH)
        {
            return false;
        }
        LocalRun run = command.run;
        if (run == LocalRun.NONE)
        {
            run = pool.poll();
            if (run == null)
            {
                return false; // every run is out: the open command goes alone (and is journaled at close)
            }
            command.run = run;
            run.add(command.requestId, command.batch, command.batchEntry, command.localAddress,
                command.targetAddress, command.length, command.traceId, command.submitNanos, command.intakeNanos);
        }
        if (!run.add(requestId, batch, batchEntry, localAddress, targetAddress, length, traceId, submitNanos,
            intakeNanos))
        {
            open = null; // full: the next request starts a command of its own
            return false;
        }
        return true;
    }

    /**
     * Add a batch's entries {@code [from, to)} to the open command's run, straight from the batch record, once
     * {@link #tryAppend} took the entry before them into it: the run is then open for this batch's submitter, opcode
     * and segment, so only what differs per entry is checked (its length; the run's room).
     *
     * @param entriesAt the offset of the record's first entry in {@code buffer}.
     * @return how many entries, from {@code from} on, now ride in the run: it stops at the first that does not fit
     * (which goes the usual way: a run full is closed, as {@link #tryAppend} closes it).
     */
    int appendEntries(final BatchTracker batch, final UnsafeBuffer buffer, final int entriesAt, final int from,
        final int to)
    {
        final LocalRun run = open.run;
        int entry = from;
        for (int at = entriesAt + from * SubmitBatchFlyweight.ENTRY_LENGTH; entry < to;
            entry++, at += SubmitBatchFlyweight.ENTRY_LENGTH)
        {
            final long length = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_LENGTH_OFFSET);
            if (length <= 0 || length > LocalRun.MAX_MEMBER_LENGTH)
            {
                break;
            }
            final long localAddress = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_LOCAL_ADDRESS_OFFSET);
            final long targetAddress = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_TARGET_ADDRESS_OFFSET);
            if (!run.addEntry(batch, entry, localAddress, targetAddress, length))
            {
                open = null; // full: the next entry starts a command of its own
                break;
            }
        }
        return entry - from;
    }

    /**
     * @return true while a command is held open (a request may ride in it).
     */
    boolean isOpen()
    {
        return open != null;
    }

    /**
     * A command intake just filled in (claimed, not yet published): held open when later requests may ride in it.
     *
     * @return true when it is held open: its SUBMITTED record is written here at {@link #close()} if it stays alone,
     * by the worker if it becomes a run; false: intake journals it now.
     */
    boolean offer(final TransferCommand command)
    {
        open = mayGather(command) ? command : null;
        openIsHeld = false;
        return open != null;
    }

    /**
     * Hold open intake's own command, which the worker runs inline at the end of the pass (a batch's entry, see
     * SubmitAdapter): requests ride in it as in any open command, and no SUBMITTED record is written for it here
     * when it stays alone (its COMPLETED carries its times, as for any request run inline).
     */
    void offerHeld(final TransferCommand command)
    {
        open = command;
        openIsHeld = true;
    }

    /**
     * No request rides in the open command any more: intake claims another sequence, or publishes its pass.
     */
    void close()
    {
        final TransferCommand command = open;
        if (command != null)
        {
            open = null;
            if (command.run == LocalRun.NONE && !openIsHeld)
            {
                journal.onSubmitted(command.submitter.slot(), command.requestId, command.traceId, command.opcode,
                    command.length, command.submitNanos, command.intakeNanos);
            }
        }
    }

    private static boolean mayGather(final TransferCommand command)
    {
        return command.submitter != null && command.refusal == 0 && command.notifyLength == 0 &&
            command.members.count() == 0 && (command.opcode == Opcode.READ || command.opcode == Opcode.WRITE) &&
            !RemoteSegments.isRemote(command.segmentHandle) && command.length > 0 &&
            command.length <= LocalRun.MAX_MEMBER_LENGTH;
    }
}
