package io.xferd.daemon.pipeline;

import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.session.SubmitRing;
import io.xferd.daemon.transport.CoalescedRequests;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Intake: polls every connected client's own submit ring in turn (each cycle starts one client further, and takes at
 * most a few records and a bounded number of requests from each, so a busy client cannot starve the others), checks
 * each record's framing and publishes its requests into the {@link TransferPipeline}: one command per SUBMIT, one
 * per entry of a SUBMIT_BATCH. The ring a record arrives on names its client: there are no credentials to check.
 * <p>
 * A client whose ring breaks the protocol (see {@link SubmitRing}, and a record whose length disagrees with its own
 * fields) is handed to the conductor to be cut off; nobody else notices. When the pipeline is full, records stay in
 * their rings (back-pressure, nothing dropped); a batch too big for the room left is published over several cycles.
 * Allocation-free once each client's batch trackers exist.
 * <p>
 * What a request costs here is paid once per pass over a client's ring where it can be: the commands of every
 * record taken in one pass are published to the workers together ({@code publish(lo, hi)}, one cursor write), the
 * submitted counter moves once per pass, just before that publish (so it never lags a completion), the client is
 * borrowed once for all the pass's commands (intake holds its own borrow meanwhile, so the client cannot go), and
 * the clock is read once per duty cycle (a request's intake time is the cycle's: the intake pass is short). Small
 * local requests of one pass to one segment ride in one command ({@link LocalRunGatherer}): one pipeline event,
 * not one per request.
 * <p>
 * With SHARED threading intake and the transfer workers take turns on one thread, so a lone small local request
 * need not cross the pipeline at all: given the thread's worker ({@link #SubmitAdapter(RingBuffer, SessionTable,
 * ManyToOneConcurrentArrayQueue, SystemCounters, NanoClock, TransferJournal, int, int, long, TransferWorker)}),
 * intake holds back a SUBMIT that could ride in a local run when nothing is in the pipeline and nothing was claimed
 * before it in the pass. When the pass ends with it alone, the worker runs it right there
 * ({@link TransferWorker#executeInline}: every check, grant, borrow and status as in the pipeline; the completion
 * written by this thread, one journal record: its COMPLETED) under intake's borrow of the client: no claim, publish
 * or poll, no borrow of its own. When anything follows it in the pass it takes its pipeline slot after all, ahead of
 * what follows, and goes as before.
 * <p>
 * A batch of small local requests is held the same way ({@link #mayHoldEntry}): the entry that would claim a slot
 * goes into intake's own command instead, the entries after it ride in its local run, and the worker runs that run
 * at the end of the pass ({@link TransferWorker#executeInline}), ahead of anything the pass published after it. What
 * a cycle runs inline, every client's together, stops at the worker's byte budget: the rest goes through the pipeline.
 * The reason: a pipeline slot is one of thousands, cold in the caches by the time the ring comes round to it, while
 * intake's own command stays warm. What was measured for it is indirect: PassCostProbe with a 64-slot pipeline cost
 * 15-35 % less per 64 B entry than with the default 4096 slots (warm slots against cold, not inline against the
 * pipeline). Inline against the pipeline was measured only on a loaded machine, together with the batch flyweight's
 * change (PassCostProbe, shared threading, 4096 slots, main against the branch, load 6-20: 0.60-0.86 per 64 B entry,
 * 0.89-1.02 per 4 KiB entry; docs/performance.md, round seven): a quiet re-run decides.
 */
public final class SubmitAdapter implements Agent, SubmitRing.RecordHandler
{
    /** Records taken from one client's ring per duty cycle. */
    static final int RECORDS_PER_CLIENT = 16;
    /** Requests (SUBMITs and batch entries) published for one client per duty cycle. */
    static final int REQUESTS_PER_CLIENT = 256;

    private final RingBuffer<TransferCommand> pipeline;
    private final SessionTable registry;
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects;
    private final ManyToOneConcurrentArrayQueue<BatchTracker> heldEntries;
    private final NanoClock clock;
    private final int maxBatchEntries;
    private final int batchTrackersPerClient;
    private final SubmitRequestFlyweight request = new SubmitRequestFlyweight();
    private final SubmitBatchFlyweight batchRecord = new SubmitBatchFlyweight();
    private final AtomicCounter submitted;
    private final AtomicCounter failed;
    private final AtomicCounter malformed;
    private final AtomicCounter backpressure;
    private final TransferJournal journal;
    private final ClientIntake[] clients;
    private final RequestCoalescer coalescer;
    private final LocalRunGatherer runs;
    /** The worker that shares this thread (SHARED threading), which runs lone local requests inline; or null. */
    private final TransferWorker inline;
    /** The inline worker's byte budget per duty cycle (0 without one): the bound on {@link #inlineBytes}. */
    private final long inlineByteBudget;
    /** The SUBMIT held back to run inline when its pass ends with it alone (valid while {@link #held}). */
    private final TransferCommand heldCommand = new TransferCommand();
    private boolean held;
    /**
     * True while {@link #heldCommand} holds a batch's entry (and the entries that ride in its local run) to run
     * inline at the end of the pass: one of intake's own commands, hot in the caches, instead of the next of the
     * pipeline's thousands of slots, and no claim, publish, poll or borrow (see {@link #mayHoldEntry}).
     */
    private boolean heldBatch;
    /**
     * Bytes the requests run inline in this duty cycle asked for, every client's together: once they reach the
     * worker's byte budget ({@link #inlineByteBudget}) the rest of the cycle goes through the pipeline, so that one
     * intake cycle over many clients cannot copy without bound before the worker's turn (its storage reaping, say).
     */
    private long inlineBytes;
    private ClientSession current;
    private ClientIntake currentIntake;
    private int budget;
    private boolean pipelineFull;
    // a SUBMIT_BATCH stayed in its ring this pass for want of a free batch tracker: one comes back with a completion,
    // which may ring no doorbell (the TCP transport's), so intake must not sleep on the doorbells meanwhile
    private boolean waitingForTracker;
    private int nextStart;
    /** Pipeline sequences claimed and filled in this pass, published together: none while {@code lo > hi}. */
    private long claimedLo = 0;
    private long claimedHi = -1;
    /** Requests taken in this pass, counted when they are published. */
    private int submittedThisPass;
    /** Borrows of the current client its commands of this pass hold, taken in one step when they are published. */
    private int passBorrows;
    private long cycleNanos;
    private boolean clockRead;

    public SubmitAdapter(
        final RingBuffer<TransferCommand> pipeline,
        final SessionTable registry,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final SystemCounters counters,
        final NanoClock clock,
        final TransferJournal journal,
        final int maxBatchEntries,
        final int batchTrackersPerClient)
    {
        this(pipeline, registry, disconnects, counters, clock, journal, maxBatchEntries, batchTrackersPerClient, 0);
    }

    /**
     * @param coalesceLimit the most bytes intake merges adjacent requests to another daemon into (the transport's
     *                      slice size); 0 merges nothing.
     */
    public SubmitAdapter(
        final RingBuffer<TransferCommand> pipeline,
        final SessionTable registry,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final SystemCounters counters,
        final NanoClock clock,
        final TransferJournal journal,
        final int maxBatchEntries,
        final int batchTrackersPerClient,
        final long coalesceLimit)
    {
        this(pipeline, registry, disconnects, counters, clock, journal, maxBatchEntries, batchTrackersPerClient,
            coalesceLimit, null);
    }

    /**
     * @return whether the last pass left a SUBMIT_BATCH in its ring because every batch tracker of its client was
     * out (intake's thread): the tracker comes back with a completion that may ring no doorbell.
     */
    public boolean waitsForBatchTracker()
    {
        return waitingForTracker;
    }

    /**
     * @param inline the transfer worker that runs on intake's own thread (SHARED threading), to run lone small
     *               local requests without the pipeline hop; null when the workers have threads of their own.
     */
    public SubmitAdapter(
        final RingBuffer<TransferCommand> pipeline,
        final SessionTable registry,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final SystemCounters counters,
        final NanoClock clock,
        final TransferJournal journal,
        final int maxBatchEntries,
        final int batchTrackersPerClient,
        final long coalesceLimit,
        final TransferWorker inline)
    {
        this.inline = inline;
        this.inlineByteBudget = inline == null ? 0 : inline.byteBudget();
        this.pipeline = pipeline;
        this.registry = registry;
        this.disconnects = disconnects;
        this.clock = clock;
        this.journal = journal;
        this.maxBatchEntries = maxBatchEntries;
        this.batchTrackersPerClient = batchTrackersPerClient;
        this.heldEntries = new ManyToOneConcurrentArrayQueue<>(registry.capacity() * batchTrackersPerClient);
        this.clients = new ClientIntake[registry.capacity()];
        this.submitted = counters.get(SystemCounter.REQUESTS_SUBMITTED);
        this.failed = counters.get(SystemCounter.REQUESTS_FAILED);
        this.malformed = counters.get(SystemCounter.MALFORMED_RECORDS);
        this.backpressure = counters.get(SystemCounter.PIPELINE_BACKPRESSURE);
        this.coalescer = new RequestCoalescer(coalesceLimit, counters.get(SystemCounter.REQUESTS_COALESCED));
        this.runs = new LocalRunGatherer(journal);
    }

    // the bound on slots of the last duty cycle: a client that left the highest slot is settled once it falls below
    private int slotsLastCycle;

    @Override
    public int doWork()
    {
        pipelineFull = false;
        waitingForTracker = false;
        clockRead = false;
        inlineBytes = 0;
        int work = publishHeldEntries();
        publishClaimed();
        final int slots = registry.slotsInUse(); // not every slot: an idle cycle is what a new record waits out
        for (int slot = slots; slot < slotsLastCycle; slot++)
        {
            settleDroppedBatch(slot, registry.inSlot(slot)); // slots the bound fell below are not visited again
        }
        slotsLastCycle = slots;
        final int start = nextStart < slots ? nextStart : 0;
        nextStart = start + 1 >= slots ? 0 : start + 1;
        for (int i = 0; i < slots && !pipelineFull; i++)
        {
            final int slot = start + i < slots ? start + i : start + i - slots;
            final ClientSession session = registry.inSlot(slot);
            settleDroppedBatch(slot, session);
            if (session == null || session.submitRing().isBroken() || !session.tryAcquire())
            {
                continue; // no client, one being cut off, or one closing: its ring may be unmapped soon
            }
            try
            {
                current = session;
                currentIntake = intakeOf(slot, session);
                budget = REQUESTS_PER_CLIENT;
                work += session.submitRing().read(this, RECORDS_PER_CLIENT);
                if (session.submitRing().isBroken())
                {
                    cutOff(session);
                }
            }
            finally
            {
                try
                {
                    publishClaimed(); // before the release: a command holds its own borrow of the session
                }
                finally
                {
                    // publishing may run a held request inline: whatever it throws, the borrow ends with the pass
                    current = null;
                    currentIntake = null;
                    session.release();
                }
            }
        }
        return work;
    }

    /**
     * A batch half published when its client closed (or left the slot): the entries not yet published were counted
     * submitted with the batch and will never run, so they count failed (submitted = completed + failed: intake
     * sleeps on the doorbells only when it holds).
     */
    private void settleDroppedBatch(final int slot, final ClientSession session)
    {
        final ClientIntake previous = clients[slot];
        if (previous != null && previous.partialBatch != null &&
            (session == null || previous.session != session || session.isClosed()))
        {
            final BatchTracker dropped = previous.partialBatch;
            previous.partialBatch = null;
            failed.getAndAdd(dropped.entryCount - dropped.nextEntry);
        }
    }

    /**
     * @return intake's state of the client in a slot, new when another client holds the slot than last time (once
     * per connection).
     */
    private ClientIntake intakeOf(final int slot, final ClientSession session)
    {
        ClientIntake intake = clients[slot];
        if (intake == null || intake.session != session)
        {
            intake = new ClientIntake(session);
            clients[slot] = intake;
        }
        return intake;
    }

    private void cutOff(final ClientSession session)
    {
        malformed.increment();
        session.protocolViolation("its submit ring broke the protocol: " + session.submitRing().violation());
        session.queueCutOff(disconnects);
    }

    @Override
    public SubmitRing.Action onRecord(final int type, final UnsafeBuffer buffer, final int offset, final int length)
    {
        if (type == RecordTypes.SUBMIT)
        {
            return onSubmit(buffer, offset, length);
        }
        if (type == RecordTypes.SUBMIT_BATCH)
        {
            return onBatch(buffer, offset, length);
        }
        return SubmitRing.Action.MALFORMED;
    }

    private SubmitRing.Action onSubmit(final UnsafeBuffer buffer, final int offset, final int length)
    {
        if (length < SubmitRequestFlyweight.HEADER_LENGTH)
        {
            return SubmitRing.Action.MALFORMED;
        }
        request.wrap(buffer, offset);
        final int notifyLength = request.notifyLength();
        if (notifyLength < 0 || SubmitRequestFlyweight.HEADER_LENGTH + (long)notifyLength != length)
        {
            return SubmitRing.Action.MALFORMED;
        }
        if (budget <= 0)
        {
            return SubmitRing.Action.LEAVE;
        }
        if (held)
        {
            releaseHeld(); // another request follows it in this pass: it takes its place in the pipeline first
        }
        else if (notifyLength == 0 && mayHold())
        {
            hold();
            budget--;
            return SubmitRing.Action.TAKEN;
        }
        if (notifyLength == 0 && coalescer.isOpen() && appendSubmit())
        {
            budget--;
            return SubmitRing.Action.TAKEN;
        }
        if (notifyLength == 0 && runs.isOpen() && appendSubmitToRun())
        {
            budget--;
            return SubmitRing.Action.TAKEN;
        }
        final long sequence = claim();
        if (sequence < 0)
        {
            return SubmitRing.Action.LEAVE;
        }
        final TransferCommand command = pipeline.get(sequence);
        final ClientSession session = current;
        passBorrows++; // the command's borrow of its submitter, taken for the whole pass in publishClaimed
        fillFromRequest(command, session);
        if (notifyLength > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH)
        {
            command.refusal = TransferStatus.INVALID_NOTIFY; // well framed, too long: a status, not a disconnect
        }
        else if (notifyLength > 0)
        {
            command.notify.putBytes(0, buffer, request.notifyOffset(), notifyLength);
            command.notifyLength = notifyLength;
        }
        submittedThisPass++;
        coalescer.offer(command);
        if (!runs.offer(command))
        {
            journal.onSubmitted(session.slot(), command.requestId, command.traceId, command.opcode, command.length,
                command.submitNanos, command.intakeNanos);
        }
        budget--;
        return SubmitRing.Action.TAKEN;
    }

    /**
     * The SUBMIT in {@link #request} as a single request of {@code submitter} (no batch; the notify is the caller's).
     */
    private void fillFromRequest(final TransferCommand command, final ClientSession submitter)
    {
        command.submitter = submitter;
        command.batch = null;
        command.requestId = request.requestId();
        command.opcode = request.opcode();
        command.segmentHandle = request.segmentHandle();
        command.localAddress = request.localAddress();
        command.targetAddress = request.targetAddress();
        command.length = request.length();
        command.traceId = request.traceId();
        command.submitNanos = request.submitNanos();
        command.intakeNanos = cycleNanos();
        command.refusal = 0;
        command.notifyLength = 0;
    }

    /**
     * @return true when the SUBMIT in {@link #request} may be held back to run inline: a small local READ or WRITE
     * (as may ride in a local run), with the cycle's inline bytes below the worker's byte budget, nothing claimed
     * before it in this pass and nothing left in the pipeline (so it cannot overtake an earlier request of its client).
     */
    private boolean mayHold()
    {
        if (inline == null || heldBatch || inlineBytes >= inlineByteBudget || claimedLo <= claimedHi ||
            coalescer.isOpen() || runs.isOpen())
        {
            return false;
        }
        final int opcode = request.opcode();
        final long length = request.length();
        return (opcode == Opcode.READ || opcode == Opcode.WRITE) && length > 0 &&
            length <= LocalRun.MAX_MEMBER_LENGTH && !RemoteSegments.isRemote(request.segmentHandle()) &&
            pipeline.getMinimumGatingSequence() == pipeline.getCursor();
    }

    /**
     * Hold the SUBMIT in {@link #request} back (intake's own command, not a pipeline slot): journaled and counted
     * when it runs, or when it goes to the pipeline after all.
     */
    private void hold()
    {
        final TransferCommand command = heldCommand;
        fillFromRequest(command, current);
        held = true;
    }

    /**
     * The held SUBMIT goes to the pipeline after all (a request follows it in the pass): it takes the next slot,
     * ahead of what follows, as if it had never been held; run here when the pipeline is full (nothing precedes it).
     */
    private void releaseHeld()
    {
        held = false;
        final TransferCommand from = heldCommand;
        final long sequence = claim();
        if (sequence < 0)
        {
            runHeld(from);
            return;
        }
        final TransferCommand command = pipeline.get(sequence);
        passBorrows++;
        command.copyRequestFrom(from);
        from.clear();
        submittedThisPass++;
        if (!runs.offer(command))
        {
            journal.onSubmitted(command.submitter.slot(), command.requestId, command.traceId, command.opcode,
                command.length, command.submitNanos, command.intakeNanos);
        }
    }

    /**
     * The held SUBMIT stayed alone: counted (before its completion, so submitted never lags completed) and run on this
     * thread, within intake's borrow of its client. It is journaled by its COMPLETED record alone, which carries its
     * submit and intake times: it never waited anywhere a SUBMITTED record would show (one handed to the storage stage
     * gets its SUBMITTED record there).
     */
    private void runHeld(final TransferCommand command)
    {
        held = false;
        submitted.incrementRelease(); // intake is the counter's only writer: a store, not an atomic add
        inlineBytes += command.length;
        inline.executeInline(command);
    }

    /**
     * @return true when a batch's entry that would take a pipeline slot may be held back instead, with the entries
     * after it riding in its local run, to run inline at the end of the pass: a small local READ or WRITE (as may
     * ride in a local run) of the client of this pass, the cycle's inline bytes still below the worker's byte budget,
     * nothing held or claimed before it in this pass, and nothing left in the pipeline (so neither it nor its run
     * overtakes an earlier request of its client). Whatever the pass claims after it is published first and run after
     * it: the worker shares this thread and polls only once intake is done.
     */
    private boolean mayHoldEntry(final BatchTracker batch, final long length)
    {
        return inline != null && !held && !heldBatch && inlineBytes < inlineByteBudget && claimedLo > claimedHi &&
            !coalescer.isOpen() && !runs.isOpen() && batch.submitter == current && !batch.holdsBackLast &&
            (batch.opcode == Opcode.READ || batch.opcode == Opcode.WRITE) && length > 0 &&
            length <= LocalRun.MAX_MEMBER_LENGTH && !RemoteSegments.isRemote(batch.segmentHandle) &&
            pipeline.getMinimumGatingSequence() == pipeline.getCursor();
    }

    /**
     * Hold a batch's entry back in intake's own command, under intake's borrow of the client for this pass (no borrow
     * of its own), open for the entries after it to ride in its run. Counted with its batch already; journaled by
     * the worker (a run's pair of records, or a lone entry's COMPLETED as for a held SUBMIT).
     */
    private void holdEntry(final BatchTracker batch, final int entry, final long localAddress,
        final long targetAddress, final long length)
    {
        final TransferCommand command = heldCommand;
        fillFromEntry(command, batch, entry, localAddress, targetAddress, length);
        heldBatch = true;
        runs.offerHeld(command);
    }

    /**
     * @return true when the SUBMIT in {@link #request} rides in the open local run (and in its borrow of the client).
     */
    private boolean appendSubmitToRun()
    {
        final ClientSession session = current;
        final long intakeNanos = cycleNanos();
        if (!runs.tryAppend(session, request.opcode(), request.segmentHandle(), request.localAddress(),
            request.targetAddress(), request.length(), request.traceId(), request.requestId(), null, 0,
            request.submitNanos(), intakeNanos))
        {
            return false;
        }
        submittedThisPass++; // journaled by the worker, with its completion
        return true;
    }

    /**
     * @return true when the SUBMIT in {@link #request} continues the open command and now rides in it (and in its
     * borrow of the client).
     */
    private boolean appendSubmit()
    {
        final ClientSession session = current;
        final long intakeNanos = cycleNanos();
        if (!coalescer.tryAppend(session, request.opcode(), request.segmentHandle(), request.localAddress(),
            request.targetAddress(), request.length(), request.traceId(), request.requestId(), null, 0,
            request.submitNanos(), intakeNanos))
        {
            return false;
        }
        submittedThisPass++;
        journal.onSubmitted(session.slot(), request.requestId(), request.traceId(), request.opcode(), request.length(),
            request.submitNanos(), intakeNanos);
        return true;
    }

    private SubmitRing.Action onBatch(final UnsafeBuffer buffer, final int offset, final int length)
    {
        final ClientSession session = current;
        final ClientIntake intake = currentIntake;
        if (held)
        {
            releaseHeld(); // ahead of the batch's entries
        }
        BatchTracker batch = intake.partialBatch;
        if (batch == null)
        {
            if (length < SubmitBatchFlyweight.HEADER_LENGTH)
            {
                return SubmitRing.Action.MALFORMED;
            }
            batchRecord.wrap(buffer, offset);
            final int entryCount = batchRecord.entryCount();
            final int notifyLength = batchRecord.notifyLength();
            if (entryCount < 1 || entryCount > maxBatchEntries || notifyLength < 0 ||
                SubmitBatchFlyweight.HEADER_LENGTH + ((notifyLength + 7L) & ~7L) +
                (long)SubmitBatchFlyweight.ENTRY_LENGTH * entryCount != length)
            {
                return SubmitRing.Action.MALFORMED;
            }
            if (notifyLength > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH)
            {
                return refuseBatch(session, TransferStatus.INVALID_NOTIFY);
            }
            batch = takeTracker(intake);
            if (batch == null)
            {
                waitingForTracker = true;
                return SubmitRing.Action.LEAVE; // every tracker of this client is out: its next batch waits
            }
            startBatch(session, batch, buffer, offset, entryCount, notifyLength);
        }
        // a batch half published in an earlier cycle: its header was checked and copied then; only entries are read
        batchRecord.wrap(buffer, offset);
        final int last = batch.holdsBackLast ? batch.entryCount - 1 : batch.entryCount;
        while (batch.nextEntry < last)
        {
            if (budget <= 0)
            {
                intake.partialBatch = batch;
                return SubmitRing.Action.LEAVE;
            }
            final int entry = batch.nextEntry;
            final int at = offset + batch.entriesOffset + entry * SubmitBatchFlyweight.ENTRY_LENGTH;
            final long localAddress = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_LOCAL_ADDRESS_OFFSET);
            final long targetAddress = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_TARGET_ADDRESS_OFFSET);
            final long entryLength = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_LENGTH_OFFSET);
            if (runs.tryAppend(batch.submitter, batch.opcode, batch.segmentHandle, localAddress, targetAddress,
                entryLength, batch.traceId, batch.requestId, batch, entry, batch.submitNanos, batch.intakeNanos))
            {
                batch.nextEntry++; // journaled by the worker, with its completion
                budget--;
                // the entries after it ride in the same run while they fit, each checked for what differs per entry
                final int appended = runs.appendEntries(batch, buffer, offset + batch.entriesOffset,
                    batch.nextEntry, Math.min(last, batch.nextEntry + budget));
                batch.nextEntry += appended;
                budget -= appended;
                continue;
            }
            if (coalescer.tryAppend(batch.submitter, batch.opcode, batch.segmentHandle, localAddress, targetAddress,
                entryLength, batch.traceId, batch.requestId, batch, entry, batch.submitNanos, batch.intakeNanos))
            {
                batch.nextEntry++;
                journal.onSubmitted(session.slot(), batch.requestId, batch.traceId, batch.opcode, entryLength,
                    batch.submitNanos, batch.intakeNanos);
                budget--;
                continue;
            }
            if (mayHoldEntry(batch, entryLength))
            {
                holdEntry(batch, entry, localAddress, targetAddress, entryLength);
                batch.nextEntry++; // the entries after it ride in its run: the loop's next turn appends them
                budget--;
                continue;
            }
            final long sequence = claim();
            if (sequence < 0)
            {
                intake.partialBatch = batch;
                return SubmitRing.Action.LEAVE;
            }
            batch.nextEntry++;
            publishEntry(sequence, batch, entry, localAddress, targetAddress, entryLength, false);
            budget--;
        }
        if (batch.holdsBackLast)
        {
            final int at = offset + batch.entriesOffset + last * SubmitBatchFlyweight.ENTRY_LENGTH;
            batch.heldLocalAddress = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_LOCAL_ADDRESS_OFFSET);
            batch.heldTargetAddress = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_TARGET_ADDRESS_OFFSET);
            batch.heldLength = buffer.getLong(at + SubmitBatchFlyweight.ENTRY_LENGTH_OFFSET);
            if (last == 0)
            {
                batch.releaseHeld(); // nothing to wait for
            }
        }
        intake.partialBatch = null;
        return SubmitRing.Action.TAKEN;
    }

    private void startBatch(final ClientSession session, final BatchTracker batch, final UnsafeBuffer buffer,
        final int offset, final int entryCount, final int notifyLength)
    {
        final long intakeNanos = cycleNanos();
        batch.begin(session, batchRecord.requestId(), batchRecord.opcode(), entryCount, batchRecord.segmentHandle(),
            batchRecord.traceId(), batchRecord.submitNanos(), intakeNanos);
        batch.entriesOffset = SubmitBatchFlyweight.entriesOffset(notifyLength);
        if (batch.opcode == Opcode.WRITE && notifyLength > 0)
        {
            batch.notify.putBytes(0, buffer, batchRecord.notifyOffset(), notifyLength);
            batch.notifyLength = notifyLength;
            if (RemoteSegments.isRemote(batch.segmentHandle))
            {
                batch.holdsBackLast = true; // the notify rides on the last entry, sent once the others landed
            }
            else
            {
                batch.localTarget = registry.segment(batch.segmentHandle);
            }
        }
        submittedThisPass += entryCount; // counted per request, like SUBMITs, so submitted = completed + failed
    }

    private BatchTracker takeTracker(final ClientIntake intake)
    {
        if (intake.batchTrackers == null)
        {
            // once per client, at its first batch
            intake.batchTrackers = new BatchTrackerPool(batchTrackersPerClient, heldEntries);
        }
        return intake.batchTrackers.take();
    }

    /**
     * A well framed batch that fails as a whole before any entry moves: one command carrying the status.
     */
    private SubmitRing.Action refuseBatch(final ClientSession session, final int status)
    {
        final long sequence = claim();
        if (sequence < 0)
        {
            return SubmitRing.Action.LEAVE;
        }
        final TransferCommand command = pipeline.get(sequence);
        passBorrows++;
        command.submitter = session;
        command.batch = null;
        command.requestId = batchRecord.requestId();
        command.opcode = batchRecord.opcode();
        command.segmentHandle = batchRecord.segmentHandle();
        command.length = 0;
        command.traceId = batchRecord.traceId();
        command.submitNanos = batchRecord.submitNanos();
        command.intakeNanos = cycleNanos();
        command.notifyLength = 0;
        command.refusal = status;
        submittedThisPass++;
        return SubmitRing.Action.TAKEN;
    }

    /**
     * @param withNotify true for a held-back last entry, published outside any client's pass: it borrows its
     *                   submitter on its own; the others are borrowed with their pass ({@link #publishClaimed()}).
     */
    private void publishEntry(final long sequence, final BatchTracker batch, final int entry, final long localAddress,
        final long targetAddress, final long length, final boolean withNotify)
    {
        final TransferCommand command = pipeline.get(sequence);
        final ClientSession session = batch.submitter;
        if (session != null && borrow(session, withNotify))
        {
            fillFromEntry(command, batch, entry, localAddress, targetAddress, length);
            if (withNotify)
            {
                command.notify.putBytes(0, batch.notify, 0, batch.notifyLength);
                command.notifyLength = batch.notifyLength;
            }
            coalescer.offer(command);
            if (!runs.offer(command))
            {
                journal.onSubmitted(session.slot(), command.requestId, command.traceId, command.opcode, length,
                    command.submitNanos, command.intakeNanos);
            }
        }
        else
        {
            command.clear(); // the client is being closed: nobody waits for this batch any more
            failed.increment(); // the held entry was counted submitted with its batch
        }
    }

    /**
     * A batch's entry as a request of its batch's submitter (no notify: a held-back last entry's is the caller's).
     */
    private static void fillFromEntry(final TransferCommand command, final BatchTracker batch, final int entry,
        final long localAddress, final long targetAddress, final long length)
    {
        command.submitter = batch.submitter;
        command.batch = batch;
        command.batchEntry = entry;
        command.requestId = batch.requestId;
        command.opcode = batch.opcode;
        command.segmentHandle = batch.segmentHandle;
        command.localAddress = localAddress;
        command.targetAddress = targetAddress;
        command.length = length;
        command.traceId = batch.traceId;
        command.submitNanos = batch.submitNanos;
        command.intakeNanos = batch.intakeNanos;
        command.refusal = 0;
        command.notifyLength = 0;
    }

    /**
     * @return true when the command may name {@code session}: within its own pass, counted into the pass's borrow;
     * otherwise borrowed now.
     */
    private boolean borrow(final ClientSession session, final boolean outsideItsPass)
    {
        if (!outsideItsPass && session == current)
        {
            passBorrows++;
            return true;
        }
        return session.tryAcquire();
    }

    /**
     * Batches to another daemon whose other entries all landed: their last entry goes now, with the notify.
     */
    private int publishHeldEntries()
    {
        int work = 0;
        BatchTracker batch;
        while ((batch = heldEntries.peek()) != null)
        {
            final long sequence = claim();
            if (sequence < 0)
            {
                break;
            }
            heldEntries.poll();
            publishEntry(sequence, batch, batch.entryCount - 1, batch.heldLocalAddress, batch.heldTargetAddress,
                batch.heldLength, true);
            work++;
        }
        return work;
    }

    /**
     * @return a pipeline sequence, or -1 when the pipeline is full (this cycle ends). Claimed sequences are
     * published together by {@link #publishClaimed()}.
     */
    private long claim()
    {
        coalescer.close(); // only the last command claimed may grow: members stay in ring order
        runs.close();
        try
        {
            final long sequence = pipeline.tryNext();
            if (claimedLo > claimedHi)
            {
                claimedLo = sequence;
            }
            claimedHi = sequence;
            return sequence;
        }
        catch (final InsufficientCapacityException ex)
        {
            backpressure.increment();
            pipelineFull = true;
            return -1;
        }
    }

    /**
     * Hand this pass's commands to the workers: count them first, so that submitted never lags completed, then
     * publish every claimed sequence with one cursor write (single producer: they are contiguous).
     */
    private void publishClaimed()
    {
        coalescer.close(); // merging never waits for requests that are not in the ring yet
        runs.close();
        if (passBorrows > 0)
        {
            final int borrows = passBorrows;
            passBorrows = 0;
            if (!current.tryAcquire(borrows))
            {
                refuseClaimed(current); // closed during the pass: nobody waits for these any more
            }
        }
        if (submittedThisPass > 0)
        {
            submitted.getAndAddRelease(submittedThisPass); // its only writer: a store, not an atomic add
            submittedThisPass = 0;
        }
        if (claimedLo <= claimedHi)
        {
            pipeline.publish(claimedLo, claimedHi);
            claimedLo = 0;
            claimedHi = -1;
        }
        if (held)
        {
            runHeld(heldCommand); // the pass ended with it alone (nothing was claimed with it: see mayHold)
        }
        if (heldBatch)
        {
            heldBatch = false; // its entries were counted with their batch
            final TransferCommand command = heldCommand;
            inlineBytes += command.run.count() > 0 ? command.run.bytes() : command.length;
            inline.executeInline(command); // ahead of what was published after it: see mayHoldEntry
        }
    }

    /**
     * The client was closed while its pass was read: its commands go out empty (the sequences must still be
     * published) and uncounted, as each would have been had it found the client closed on its own.
     */
    private void refuseClaimed(final ClientSession session)
    {
        int refusedEntries = 0;
        for (long sequence = claimedLo; sequence <= claimedHi; sequence++)
        {
            final TransferCommand command = pipeline.get(sequence);
            if (command.submitter == session)
            {
                final int submits = submitsIn(command);
                submittedThisPass -= submits;
                // batch entries were counted submitted with their batch (perhaps in an earlier pass): they fail, so
                // that submitted = completed + failed still holds (the data plane sleeps only when it does)
                refusedEntries += requestsIn(command) - submits;
                command.clear();
            }
        }
        if (refusedEntries > 0)
        {
            failed.getAndAdd(refusedEntries);
        }
    }

    /**
     * @return how many requests (SUBMITs and batch entries) the command carries.
     */
    private static int requestsIn(final TransferCommand command)
    {
        final int runCount = command.run.count();
        if (runCount > 0)
        {
            return runCount;
        }
        return Math.max(1, command.members.count());
    }

    /**
     * @return how many SUBMITs (not batch entries) the command carries: itself, or its merged members.
     */
    private static int submitsIn(final TransferCommand command)
    {
        final LocalRun run = command.run;
        if (run.count() > 0)
        {
            int submits = 0;
            for (int member = 0; member < run.count(); member++)
            {
                if (run.batch(member) == null)
                {
                    submits++;
                }
            }
            return submits;
        }
        final CoalescedRequests members = command.members;
        if (members.count() == 0)
        {
            return command.batch == null ? 1 : 0;
        }
        int submits = 0;
        for (int member = 0; member < members.count(); member++)
        {
            if (members.batch(member) == null)
            {
                submits++;
            }
        }
        return submits;
    }

    /**
     * @return this duty cycle's time, read at its first request: one clock read per cycle, not per request.
     */
    private long cycleNanos()
    {
        if (!clockRead)
        {
            cycleNanos = clock.nanoTime();
            clockRead = true;
        }
        return cycleNanos;
    }

    @Override
    public String roleName()
    {
        return "xferd-intake";
    }
}
