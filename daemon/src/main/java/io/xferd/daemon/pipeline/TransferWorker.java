package io.xferd.daemon.pipeline;

import com.lmax.disruptor.EventPoller;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.AccessPolicy;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.CoalescedRequests;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
import io.xferd.daemon.storage.StorageFile;
import io.xferd.daemon.storage.StorageIo;
import io.xferd.daemon.storage.StorageRequest;
import io.xferd.daemon.storage.StorageStage;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.LangUtil;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A transfer stage: takes its share of commands from the pipeline, checks each against the registry (segment,
 * both ranges registered, length), moves the bytes between the two regions with one copy ({@link RegionCopier}:
 * a memory copy between host mappings, the GPU runtime's copy when a side is device memory), and writes the
 * completion (and the target's notification). Both regions are borrowed for the copy so that neither can be
 * unmapped under it. Allocation-free.
 * <p>
 * The completion time is read from the clock after the first request of a duty cycle and again whenever
 * {@link #CLOCK_REFRESH_BYTES} have been copied since the last read, not after every request: a clock read costs
 * about as much as a 4 KiB copy on a VM, and a run of small requests finishing within a few microseconds of each
 * other share one time (never earlier than a request's intake). Likewise a run of requests between the same two
 * regions borrows each region once ({@link RegionBorrow}), not once per request; a borrow is kept across duty cycles
 * for the requests that follow through the same region, and given back at the end of the cycle in which its region was
 * closed, or after an idle spell.
 */
public final class TransferWorker implements Agent, EventPoller.Handler<TransferCommand>, StorageRequest.Listener
{
    /** File requests one worker may have in the storage stage at once; past it, requests go synchronously. */
    static final int FILE_TRANSFERS = 1024;
    private static final Logger LOG = LoggerFactory.getLogger(TransferWorker.class);
    /** Not a status: the request went to another daemon, whose answer completes it later. */
    private static final int HANDED_OFF = -1;
    /** Bytes copied after which the completion time is read again within one duty cycle. */
    static final long CLOCK_REFRESH_BYTES = 64 * 1024;
    /** Not a status: a merged command's requests were each answered or handed off on their own. */
    private static final int SPLIT = -2;
    /** Not a status: a span of a run's members is not between two host mappings; its members go one by one. */
    private static final int NOT_ONE_COPY = -3;

    private final int index;
    private final AccessPolicy access;
    private final int workers;
    private final EventPoller<TransferCommand> poller;
    private final SessionTable registry;
    private final CompletionSender sender;
    private final PeerTransport transport;
    private final NanoClock clock;
    private final long maxRequestLength;
    private final long byteBudget;
    private final AtomicCounter completed;
    private final AtomicCounter failed;
    private final AtomicCounter memoryFaults;
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final TransferJournal journal;
    private final RegionCopier copier;
    /**
     * The regions the last local copy borrowed, kept for the next requests that use them too, across duty cycles:
     * given back at the end of the cycle in which the region closed, or after {@link RegionBorrow}'s idle cycles.
     */
    private final RegionBorrow localBorrow = new RegionBorrow();
    private final RegionBorrow remoteBorrow = new RegionBorrow();
    /** Refilled for every remote request this worker hands to the transport (allocation-free). */
    private final RemoteRequest remoteRequest = new RemoteRequest();
    private final StorageIo storage;
    private final StorageStage stage;
    // this worker's own io_uring per device, run on this thread: local file requests go straight from here into the
    // device's submission ring and are reaped here (no hop to the stage's thread); files with sync writes excepted
    private final StorageStage localStage;
    // completions written on the storage stage's thread (a sender's flyweights belong to one thread)
    private final CompletionSender storageSender;
    // taken by this worker, returned by the stage's thread (or by this worker when the stage refused one)
    private final ManyToOneConcurrentArrayQueue<FileTransfer> fileTransfers =
        new ManyToOneConcurrentArrayQueue<>(FILE_TRANSFERS);
    private final int nicFile;
    private final int nicNvme;
    private int localNic;
    private long bytesThisCycle;
    private long clockNanos;
    private boolean clockRead;
    private long bytesSinceClock;
    /** While a run's members are executed: the regions the last member found, for the next (see executeMembers). */
    private boolean inRun;
    private Region runLocal;
    private Region runRemote;
    /** True while {@link #executeInline} runs a request intake took on this thread. */
    private boolean inline;
    /** True while a span of a run's adjacent members is executed as one (see executeMembers); its bytes. */
    private boolean spanning;
    private long spanLength;

    public TransferWorker(
        final int index,
        final TransferPipeline pipeline,
        final SessionTable registry,
        final CompletionSender sender,
        final PeerTransport transport,
        final SystemCounters counters,
        final NanoClock clock,
        final long maxRequestLength,
        final long byteBudget,
        final TransferJournal journal,
        final DeviceMemory deviceMemory,
        final AccessPolicy access)
    {
        this(index, pipeline, registry, sender, transport, counters, clock, maxRequestLength, byteBudget, journal,
            deviceMemory, access, StorageIo.DEFAULT_QUEUE_DEPTH, null);
    }

    /**
     * @param storageQueueDepth the most file operations this worker keeps in flight on its own io_uring (the
     *                          requests the storage stage cannot take: unaligned O_DIRECT, notifications).
     * @param stage             the daemon's storage stage, which takes file requests asynchronously; null to move
     *                          every file request on this thread.
     */
    public TransferWorker(
        final int index,
        final TransferPipeline pipeline,
        final SessionTable registry,
        final CompletionSender sender,
        final PeerTransport transport,
        final SystemCounters counters,
        final NanoClock clock,
        final long maxRequestLength,
        final long byteBudget,
        final TransferJournal journal,
        final DeviceMemory deviceMemory,
        final AccessPolicy access,
        final int storageQueueDepth,
        final StorageStage stage)
    {
        this.stage = stage;
        this.storageSender = stage == null ? null : new CompletionSender(sender);
        this.localStage = stage == null ? null : StorageStage.inline(stage.queueDepth(),
            counters.get(SystemCounter.STORAGE_BYTES_READ), counters.get(SystemCounter.STORAGE_BYTES_WRITTEN),
            counters.get(SystemCounter.STORAGE_ERRORS), counters.get(SystemCounter.STORAGE_SYNCS));
        if (stage != null)
        {
            for (int i = 0; i < FILE_TRANSFERS; i++)
            {
                fileTransfers.offer(new FileTransfer(this));
            }
        }
        this.index = index;
        this.access = access;
        this.workers = pipeline.workers();
        this.poller = pipeline.workerPoller(index);
        this.registry = registry;
        this.sender = sender;
        this.transport = transport;
        this.clock = clock;
        this.maxRequestLength = maxRequestLength;
        this.byteBudget = byteBudget;
        this.journal = journal;
        this.storage = new StorageIo(storageQueueDepth, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
            counters.get(SystemCounter.STORAGE_SYNCS));
        this.copier = new RegionCopier(deviceMemory, storage);
        this.nicFile = journal.nameId(StorageFile.FILE);
        this.nicNvme = journal.nameId(StorageFile.NVME);
        this.completed = counters.get(SystemCounter.REQUESTS_COMPLETED);
        this.failed = counters.get(SystemCounter.REQUESTS_FAILED);
        this.memoryFaults = counters.get(SystemCounter.MEMORY_FAULTS);
        this.bytesRead = counters.get(SystemCounter.BYTES_READ);
        this.bytesWritten = counters.get(SystemCounter.BYTES_WRITTEN);
    }

    @Override
    public int doWork()
    {
        bytesThisCycle = 0;
        clockRead = false;
        try
        {
            final int work = poller.poll(this) == EventPoller.PollState.PROCESSING ? 1 : 0;
            // after the poll: the file requests of this duty cycle enter the device with one system call
            return localStage == null ? work : work + localStage.doWork();
        }
        catch (final Exception ex)
        {
            LangUtil.rethrowUnchecked(ex);
            return 0;
        }
        finally
        {
            // the borrows carry over to the next cycle's requests, but not a region closed meanwhile (an unregister
            // waits at most one cycle for it) nor past an idle spell (RegionBorrow)
            localBorrow.endCycle();
            remoteBorrow.endCycle();
        }
    }

    /**
     * @return false to end this duty cycle once its byte budget is spent, so intake gets its turn.
     */
    @Override
    public boolean onEvent(final TransferCommand command, final long sequence, final boolean endOfBatch)
    {
        if ((workers > 1 && (sequence % workers) != index) || command.submitter == null) // one worker: no division
        {
            return true;
        }
        final ClientSession submitter = command.submitter;
        if (command.run.count() > 0)
        {
            try
            {
                executeRun(command);
            }
            finally
            {
                command.clear();
                submitter.release();
            }
            return bytesThisCycle < byteBudget;
        }
        boolean handedOff = false;
        try
        {
            final int status = executeOrFail(command);
            if (status == HANDED_OFF)
            {
                handedOff = true;
                return true;
            }
            if (status == SPLIT)
            {
                return true;
            }
            final CoalescedRequests members = command.members;
            if (members.count() == 0)
            {
                complete(command, command.requestId, command.batch, command.batchEntry, command.length,
                    command.submitNanos, command.intakeNanos, status);
            }
            else
            {
                for (int i = 0, n = members.count(); i < n; i++)
                {
                    complete(command, members.requestId(i), members.batch(i), members.batchEntry(i),
                        members.length(i), members.submitNanos(i), members.intakeNanos(i), status);
                }
            }
        }
        finally
        {
            command.clear();
            if (!handedOff)
            {
                submitter.release();
            }
        }
        return bytesThisCycle < byteBudget;
    }

    /**
     * @return the bytes a duty cycle of this worker moves before it ends the cycle (intake holds what it runs inline
     * in one of its own cycles to the same bound).
     */
    long byteBudget()
    {
        return byteBudget;
    }

    /**
     * Run a lone local request, or a local run of a batch's entries, that intake took on this worker's thread instead
     * of publishing it (SHARED threading: intake and this worker are one composite agent, see {@link SubmitAdapter}):
     * checked, copied and answered exactly as {@link #onEvent} would, except that the command holds no borrow of its
     * submitter of its own (intake's borrow for its pass covers the call; a hand-off to the storage stage takes one of
     * its own) and a lone request has no SUBMITTED record (its COMPLETED carries its submit and intake times; one
     * handed to the storage stage gets its SUBMITTED record there; a run is journaled as in the pipeline). Its region
     * borrows are this worker's, kept or given back at the end of its next duty cycle (the same composite cycle) as
     * any request's.
     */
    void executeInline(final TransferCommand command)
    {
        clockRead = false; // the last duty cycle's clock read may be long past
        inline = true;
        try
        {
            if (command.run.count() > 0)
            {
                executeRun(command);
                return;
            }
            final int status = executeOrFail(command);
            if (status != HANDED_OFF)
            {
                complete(command, command.requestId, command.batch, command.batchEntry, command.length,
                    command.submitNanos, command.intakeNanos, status);
            }
        }
        finally
        {
            inline = false;
            command.clear();
        }
    }

    private void complete(final TransferCommand command, final long requestId, final BatchTracker batch,
        final int batchEntry, final long length, final long submitNanos, final long intakeNanos, final int status)
    {
        final long bytes = status == TransferStatus.OK ? length : 0;
        if (status == TransferStatus.OK)
        {
            completed.increment();
            (command.opcode == Opcode.READ ? bytesRead : bytesWritten).getAndAdd(bytes);
            bytesThisCycle += bytes;
        }
        else
        {
            failed.increment();
        }
        final long completeNanos = completionNanos(intakeNanos, bytes);
        final ClientSession submitter = command.submitter;
        sender.complete(submitter, batch, batchEntry, requestId, status, bytes, intakeNanos, completeNanos);
        journal.onCompleted(submitter.slot(), requestId, command.traceId, command.opcode, status, length, bytes,
            TransferJournal.PEER_LOCAL, localNic, submitNanos, intakeNanos, completeNanos);
    }

    /**
     * A run of small local requests intake gathered into this command ({@link LocalRun}): each member is checked and
     * copied on its own, exactly as a command of its own would be (the command's fields are set to the member's in
     * turn), then the counters move once for the run, each SUBMIT gets its completion and each batch one count for
     * its entries in the run.
     */
    private void executeRun(final TransferCommand command)
    {
        final LocalRun run = command.run;
        final int n = run.count();
        inRun = true;
        try
        {
            executeMembers(command, run, n);
        }
        finally
        {
            inRun = false;
            runLocal = null;
            runRemote = null;
        }
        final int succeeded = run.succeeded(); // tallied with the members' results
        final int failures = run.failures();
        final long moved = run.moved();
        command.batch = null; // the members hold their trackers
        if (succeeded > 0)
        {
            completed.getAndAdd(succeeded);
            (command.opcode == Opcode.READ ? bytesRead : bytesWritten).getAndAdd(moved);
            bytesThisCycle += moved;
        }
        if (failures > 0)
        {
            failed.getAndAdd(failures);
        }
        answerRun(command, run);
    }

    /**
     * Check and copy each member of a run, its result in the run. The members share a submitter and a target segment,
     * so a member within the regions the one before it found uses them without a lookup (a region unregistered
     * meanwhile is closed: it is looked up afresh, and a borrow still refuses one closed after that check); every
     * other check is made per member.
     * <p>
     * Members that follow each other in both memories (each starts where the one before ended, on both sides) are
     * checked and copied as one span: one segment, grant and length check, one lookup of each region, one copy. The
     * span lies inside both regions exactly when each of its members does (they tile it), so the bounds still hold
     * for every member. A span goes as one only between two host mappings (anything else, a file's storage stage
     * above all, takes its members one by one); when it fails with anything but a memory fault, its members are
     * tried one by one, so each gets the status it would have got alone. A memory fault fails the whole span (its
     * owner is cut off once; nothing of it is reported complete).
     */
    private void executeMembers(final TransferCommand command, final LocalRun run, final int n)
    {
        for (int i = 0; i < n; )
        {
            final int end = spanEnd(run, i, n);
            loadMember(command, run, i);
            if (end == i + 1)
            {
                run.result(i, executeOrFail(command), localNic);
                i = end;
                continue;
            }
            command.length = spanLength;
            spanning = true;
            final int status;
            try
            {
                status = executeOrFail(command);
            }
            finally
            {
                spanning = false;
            }
            // a span's regions are every member's: TARGET_GONE (its target closed, before or after the copy) is each
            // member's answer too; tried one by one, members copied before the close would read UNKNOWN_SEGMENT
            if (status == TransferStatus.OK || status == TransferStatus.MEMORY_FAULT ||
                status == TransferStatus.TARGET_GONE)
            {
                run.result(i, end, status, localNic, spanLength);
            }
            else
            {
                for (int member = i; member < end; member++)
                {
                    loadMember(command, run, member);
                    run.result(member, executeOrFail(command), localNic);
                }
            }
            i = end;
        }
    }

    /**
     * @return the member after the last one of the span starting at {@code first}: members adjacent on both sides,
     * together at most {@code maxRequestLength} bytes ({@link #spanLength} is set to their bytes).
     */
    private int spanEnd(final LocalRun run, final int first, final int n)
    {
        long length = run.length(first);
        long nextLocal = run.localAddress(first) + length;
        long nextTarget = run.targetAddress(first) + length;
        int end = first + 1;
        while (end < n && run.localAddress(end) == nextLocal && run.targetAddress(end) == nextTarget)
        {
            final long memberLength = run.length(end);
            if (memberLength <= 0 || memberLength > maxRequestLength - length)
            {
                break;
            }
            length += memberLength;
            nextLocal += memberLength;
            nextTarget += memberLength;
            end++;
        }
        spanLength = length;
        return end;
    }

    private static void loadMember(final TransferCommand command, final LocalRun run, final int member)
    {
        command.requestId = run.requestId(member);
        command.batch = run.batch(member);
        command.batchEntry = run.batchEntry(member);
        command.localAddress = run.localAddress(member);
        command.targetAddress = run.targetAddress(member);
        command.length = run.length(member);
        command.traceId = run.traceId(member);
        command.submitNanos = run.submitNanos(member);
        command.intakeNanos = run.intakeNanos(member);
    }

    /**
     * Write the run's completions and journal records: a SUBMIT gets its completion and its SUBMITTED and COMPLETED
     * records; a batch's consecutive entries count into it once, and are journaled as one pair of records (under
     * the batch's request id: their lengths and bytes summed, the status that of the lowest failed entry, which
     * decides the batch's status too, as when its entries end one by one).
     */
    private void answerRun(final TransferCommand command, final LocalRun run)
    {
        final ClientSession submitter = command.submitter;
        final int slot = submitter.slot();
        BatchTracker batch = null;
        int first = 0;
        int entries = 0;
        int failedEntry = 0;
        int failedStatus = TransferStatus.OK;
        long batchLength = 0;
        long batchBytes = 0;
        for (int i = 0, n = run.count(); i < n; i++)
        {
            final int status = run.status(i);
            if (status == HANDED_OFF)
            {
                continue; // the storage stage answers it (and journaled its submission)
            }
            final long length = run.length(i);
            final BatchTracker memberBatch = run.batch(i);
            if (memberBatch != batch && batch != null)
            {
                endEntries(command, run, slot, first, entries, failedEntry, failedStatus, batchLength, batchBytes);
                batch = null;
            }
            if (memberBatch == null)
            {
                final long bytes = status == TransferStatus.OK ? length : 0;
                final long intakeNanos = run.intakeNanos(i);
                final long completeNanos = completionNanos(intakeNanos, bytes);
                sender.complete(submitter, run.requestId(i), status, bytes, intakeNanos, completeNanos);
                journal.onSubmitted(slot, run.requestId(i), run.traceId(i), command.opcode, length,
                    run.submitNanos(i), intakeNanos);
                journal.onCompleted(slot, run.requestId(i), run.traceId(i), command.opcode, status, length, bytes,
                    TransferJournal.PEER_LOCAL, run.nic(i), run.submitNanos(i), intakeNanos, completeNanos);
                continue;
            }
            if (batch == null)
            {
                batch = memberBatch;
                first = i;
                entries = 0;
                failedStatus = TransferStatus.OK;
                batchLength = 0;
                batchBytes = 0;
            }
            entries++;
            batchLength += length;
            if (status == TransferStatus.OK)
            {
                batchBytes += length;
            }
            else if (failedStatus == TransferStatus.OK)
            {
                failedStatus = status; // entries ride in ring order: the first failure is the lowest
                failedEntry = run.batchEntry(i);
            }
        }
        if (batch != null)
        {
            endEntries(command, run, slot, first, entries, failedEntry, failedStatus, batchLength, batchBytes);
        }
    }

    /**
     * Count a batch's consecutive entries of a run into it and journal them as one request.
     *
     * @param first the run's member that is the first of these entries.
     */
    private void endEntries(final TransferCommand command, final LocalRun run, final int slot, final int first,
        final int entries, final int failedEntry, final int failedStatus, final long length, final long bytes)
    {
        final BatchTracker batch = run.batch(first);
        final long requestId = batch.requestId;
        final long traceId = batch.traceId;
        final long submitNanos = batch.submitNanos;
        final long intakeNanos = batch.intakeNanos;
        final long completeNanos = completionNanos(intakeNanos, bytes); // once for the entries: they ended together
        // journaled before the count: the count may end the batch, whose tracker another batch then reuses
        journal.onSubmitted(slot, requestId, traceId, command.opcode, length, submitNanos, intakeNanos);
        journal.onCompleted(slot, requestId, traceId, command.opcode, failedStatus, length, bytes,
            TransferJournal.PEER_LOCAL, run.nic(first), submitNanos, intakeNanos, completeNanos);
        sender.completeEntries(batch, entries, failedEntry, failedStatus, bytes, completeNanos);
    }

    /**
     * @return the time a request that just ended completed: the clock read at most {@link #CLOCK_REFRESH_BYTES} of
     * copying ago in this duty cycle, never earlier than the request's intake.
     */
    private long completionNanos(final long intakeNanos, final long bytesMoved)
    {
        bytesSinceClock += bytesMoved; // a failed request moved nothing (and its length may be anything)
        if (!clockRead || bytesSinceClock >= CLOCK_REFRESH_BYTES)
        {
            clockNanos = clock.nanoTime();
            clockRead = true;
            bytesSinceClock = 0;
        }
        return Math.max(clockNanos, intakeNanos);
    }

    /**
     * A copy or transport that throws (a bug, memory gone under a mapping) fails this request with a status: it is
     * answered all the same, and the worker goes on with the next.
     */
    private int executeOrFail(final TransferCommand command)
    {
        try
        {
            return execute(command);
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("request {} of {} failed: {}", command.requestId, command.submitter, ex.toString());
            return TransferStatus.TRANSPORT_ERROR;
        }
        catch (final InternalError error)
        {
            if (!MemoryFaults.isMemoryFault(error))
            {
                throw error; // the JVM itself is in trouble: let the thread die, and the daemon with it
            }
            return onMemoryFault(command);
        }
    }

    /**
     * A copy touched a page of a mapped region whose file had shrunk (SIGBUS, which HotSpot turns into an
     * InternalError at the faulting copy). Sealed memfds cannot shrink: this is a file that cannot be sealed, and its
     * owner truncated it. The request fails, the owner of the shrunk file is cut off, the worker goes on.
     */
    private int onMemoryFault(final TransferCommand command)
    {
        memoryFaults.increment();
        final ClientSession submitter = command.submitter;
        final Region local = submitter.regions().find(command.localAddress, command.length);
        final ClientSession target = RemoteSegments.isRemote(command.segmentHandle) ? null :
            registry.segment(command.segmentHandle);
        final Region remote = target == null ? null : target.regions().find(command.targetAddress, command.length);
        boolean found = false;
        if (local != null && MemoryFaults.faults(local, command.localAddress, command.length))
        {
            found = true;
            sender.cutOff(submitter, "memory it registered shrank under a copy (" + local + ")");
        }
        if (remote != null && MemoryFaults.faults(remote, command.targetAddress, command.length))
        {
            found = true;
            sender.cutOff(target, "memory it registered shrank under a copy (" + remote + ")");
        }
        LOG.warn("request {} of {} faulted on registered memory{}", command.requestId, submitter,
            found ? "; cutting off the owner of the shrunk file" : " (its file is whole again: nobody is cut off)");
        return TransferStatus.MEMORY_FAULT;
    }

    private int execute(final TransferCommand command)
    {
        localNic = TransferJournal.NIC_SHM;
        if (command.refusal != TransferStatus.OK)
        {
            return command.refusal;
        }
        if (!Opcode.isValid(command.opcode))
        {
            return TransferStatus.INVALID_OPCODE;
        }
        final long length = command.length;
        if (length <= 0 || length > maxRequestLength)
        {
            return TransferStatus.INVALID_LENGTH;
        }
        if (RemoteSegments.isRemote(command.segmentHandle))
        {
            return executeRemote(command, length);
        }
        final ClientSession target = registry.segment(command.segmentHandle);
        if (target == null || target.isClosed())
        {
            return TransferStatus.UNKNOWN_SEGMENT;
        }
        if (!access.permits(command.submitter, target))
        {
            // handles are guessable (slot, generation): the policy holds on every request, not only at OPEN_SEGMENT
            return TransferStatus.ACCESS_DENIED;
        }
        final Region local = stillCovers(runLocal, command.localAddress, length) ? runLocal :
            command.submitter.regions().find(command.localAddress, length);
        if (local == null)
        {
            return TransferStatus.LOCAL_RANGE_NOT_REGISTERED;
        }
        final Region remote = stillCovers(runRemote, command.targetAddress, length) ? runRemote :
            target.regions().find(command.targetAddress, length);
        if (remote == null)
        {
            return TransferStatus.TARGET_RANGE_NOT_REGISTERED;
        }
        if (inRun)
        {
            runLocal = local;
            runRemote = remote;
        }
        if (spanning && !(local.isMapped() && remote.isMapped()))
        {
            return NOT_ONE_COPY;
        }
        if (!localBorrow.borrow(local))
        {
            return TransferStatus.LOCAL_RANGE_NOT_REGISTERED;
        }
        if (!remoteBorrow.borrow(remote))
        {
            return TransferStatus.TARGET_GONE;
        }
        final Region file = remote.isFile() ? remote : local.isFile() ? local : null;
        if (file != null)
        {
            localNic = StorageFile.NVME.equals(file.file().label()) ? nicNvme : nicFile;
            // the stage holds borrows of its own (the worker's outlive no closed region's cycle): its completion
            // releases them
            if (local.tryAcquire())
            {
                if (remote.tryAcquire())
                {
                    if (handOff(command, target, local, remote))
                    {
                        return HANDED_OFF;
                    }
                    remote.release();
                }
                local.release();
            }
        }
        final int copied = copier.copy(command.opcode, local, command.localAddress, remote, command.targetAddress,
            length);
        if (copied != TransferStatus.OK)
        {
            return copied;
        }
        if (target.isClosed())
        {
            return TransferStatus.TARGET_GONE;
        }
        if (command.opcode == Opcode.WRITE && command.notifyLength > 0)
        {
            deliverNotification(command, target);
        }
        return TransferStatus.OK;
    }

    /**
     * Give a request between a file and mapped memory to the storage stage, where its operations overlap with
     * other requests' on the device. Requests the stage does not take (unaligned on an O_DIRECT file: the bounce
     * buffer and read-modify-write are this thread's; a WRITE that notifies; the pool or the stage full) stay here.
     *
     * @return true when the stage took it: its completion will be written from the stage's thread.
     */
    private boolean handOff(
        final TransferCommand command, final ClientSession target, final Region local, final Region remote)
    {
        if (stage == null || command.notifyLength > 0)
        {
            return false;
        }
        final boolean write = command.opcode == Opcode.WRITE;
        final Region source = write ? local : remote;
        final Region destination = write ? remote : local;
        final long sourceAddress = write ? command.localAddress : command.targetAddress;
        final long destinationAddress = write ? command.targetAddress : command.localAddress;
        final Region file;
        final long fileAddress;
        final long memory;
        if (source.isFile() && destination.isMapped())
        {
            file = source;
            fileAddress = sourceAddress;
            memory = destination.mapping().address() + destination.offsetOf(destinationAddress);
        }
        else if (destination.isFile() && source.isMapped())
        {
            file = destination;
            fileAddress = destinationAddress;
            memory = source.mapping().address() + source.offsetOf(sourceAddress);
        }
        else
        {
            return false;
        }
        final StorageFile storageFile = file.file();
        final long regionOffset = file.offsetOf(fileAddress);
        if (storageFile.direct() &&
            (((storageFile.fileOffset() + regionOffset) | memory | command.length) & (StorageFile.BLOCK - 1)) != 0)
        {
            return false;
        }
        // a member of a run hands off a borrow of its submitter of its own: the run's ends with the run (an inline
        // request has none to hand: intake's ends with its pass)
        final boolean ownBorrow = command.run.count() > 0 || inline;
        if (ownBorrow && !command.submitter.tryAcquire())
        {
            return false;
        }
        final FileTransfer transfer = fileTransfers.poll();
        if (transfer == null)
        {
            if (ownBorrow)
            {
                command.submitter.release();
            }
            return false;
        }
        // sync writes are group-committed per file by one stage (the shared one, which remote writes use too)
        final StorageStage into = storageFile.sync() ? stage : localStage;
        transfer.from(command, target, local, remote, localNic).request
            .set(storageFile, file == destination, regionOffset, memory, command.length);
        transfer.sender = into == localStage ? sender : storageSender;
        final ClientSession submitter = command.submitter;
        final long requestId = command.requestId;
        if (!into.submit(transfer.request))
        {
            transfer.clear();
            fileTransfers.offer(transfer);
            if (ownBorrow)
            {
                submitter.release();
            }
            return false;
        }
        if (ownBorrow)
        {
            // intake leaves a run's members (and inline requests) to the worker to journal, and the stage's COMPLETED
            // may come first
            journal.onSubmitted(submitter.slot(), requestId, command.traceId, command.opcode, command.length,
                command.submitNanos, command.intakeNanos);
        }
        return true;
    }

    /**
     * A handed-off file request is done (the storage stage's thread, or this one for the local stage): release what
     * it borrowed, write its completion and journal record.
     */
    @Override
    public void onStorageComplete(final StorageRequest request, final int storageStatus)
    {
        final FileTransfer transfer = (FileTransfer)request.attachment;
        final ClientSession submitter = transfer.submitter;
        try
        {
            transfer.remote.release();
            transfer.local.release();
            final int status = storageStatus == TransferStatus.OK && transfer.target.isClosed() ?
                TransferStatus.TARGET_GONE : storageStatus;
            final long bytes = status == TransferStatus.OK ? transfer.length : 0;
            if (status == TransferStatus.OK)
            {
                completed.increment();
                (transfer.opcode == Opcode.READ ? bytesRead : bytesWritten).getAndAdd(bytes);
            }
            else
            {
                failed.increment();
            }
            final long completeNanos = clock.nanoTime();
            transfer.sender.complete(submitter, transfer.batch, transfer.batchEntry, transfer.requestId, status, bytes,
                transfer.intakeNanos, completeNanos);
            journal.onCompleted(submitter.slot(), transfer.requestId, transfer.traceId, transfer.opcode, status,
                transfer.length, bytes, TransferJournal.PEER_LOCAL, transfer.nic, transfer.submitNanos,
                transfer.intakeNanos, completeNanos);
        }
        finally
        {
            submitter.release();
            transfer.clear();
            fileTransfers.offer(transfer);
        }
    }

    private int executeRemote(final TransferCommand command, final long length)
    {
        final RemoteSegment target = transport == null ? null : transport.remoteSegments().get(command.segmentHandle);
        if (target == null)
        {
            return TransferStatus.UNKNOWN_SEGMENT;
        }
        final CoalescedRequests members = command.members;
        if (members.count() > 0 && (command.submitter.regions().find(command.localAddress, length) == null ||
            !target.isOneBuffer(command.targetAddress, length)))
        {
            // merged by addresses across a region's end (or into memory not registered): each request on its own
            return executeEachMember(command, target);
        }
        return executeRemote(command, target, command.localAddress, command.targetAddress, length, command.requestId,
            command.batch, command.batchEntry, command.submitNanos, command.intakeNanos, members);
    }

    /**
     * The requests of a merged command one by one, each answered (when refused here) or handed off with a borrow
     * of the submitter of its own; the command's borrow is given back as for any answered command.
     */
    private int executeEachMember(final TransferCommand command, final RemoteSegment target)
    {
        final CoalescedRequests members = command.members;
        final ClientSession submitter = command.submitter;
        long offset = 0;
        for (int i = 0, n = members.count(); i < n; i++)
        {
            final long memberLength = members.length(i);
            int status = TransferStatus.TRANSPORT_ERROR;
            if (submitter.tryAcquire())
            {
                try
                {
                    status = executeRemote(command, target, command.localAddress + offset,
                        command.targetAddress + offset, memberLength, members.requestId(i), members.batch(i),
                        members.batchEntry(i), members.submitNanos(i), members.intakeNanos(i), null);
                }
                catch (final RuntimeException ex)
                {
                    LOG.warn("request {} of {} failed: {}", members.requestId(i), submitter, ex.toString());
                }
                finally
                {
                    if (status != HANDED_OFF)
                    {
                        submitter.release();
                    }
                }
            }
            if (status != HANDED_OFF)
            {
                complete(command, members.requestId(i), members.batch(i), members.batchEntry(i), memberLength,
                    members.submitNanos(i), members.intakeNanos(i), status);
            }
            offset += memberLength;
        }
        return SPLIT;
    }

    private int executeRemote(final TransferCommand command, final RemoteSegment target, final long localAddress,
        final long targetAddress, final long length, final long requestId, final BatchTracker batch,
        final int batchEntry, final long submitNanos, final long intakeNanos, final CoalescedRequests members)
    {
        final Region local = command.submitter.regions().find(localAddress, length);
        if (local != null && local.isDevice() && !transport.carriesDeviceMemory())
        {
            // TCP stages GPU memory through pinned host memory; RDMA would need GPUDirect, not in this build
            return TransferStatus.UNSUPPORTED_MEMORY;
        }
        if (local != null && (local.isProcess() || local.isFile()) && !transport.carriesProcessMemory())
        {
            // a NIC cannot register another process's pages or a file: those go over TCP only
            return TransferStatus.UNSUPPORTED_MEMORY;
        }
        if (local == null || !local.tryAcquire())
        {
            return TransferStatus.LOCAL_RANGE_NOT_REGISTERED;
        }
        final int status;
        try
        {
            status = transport.submit(remoteRequest
                .submitter(command.submitter)
                .ids(requestId, command.traceId)
                .opcode(command.opcode)
                .local(local, localAddress)
                .target(target, targetAddress)
                .length(length)
                .times(submitNanos, intakeNanos)
                .notification(command.notify, command.notifyLength)
                .batch(batch, batchEntry)
                .members(members));
        }
        catch (final RuntimeException ex)
        {
            remoteRequest.reset();
            local.release(); // a transport that threw took nothing
            throw ex;
        }
        remoteRequest.reset(); // the transport copied what it keeps: hold no borrowed reference while idle
        if (status != TransferStatus.OK)
        {
            local.release();
            return status;
        }
        return HANDED_OFF;
    }

    private void deliverNotification(final TransferCommand command, final ClientSession target)
    {
        if (target.tryAcquire())
        {
            try
            {
                sender.notify(target, command.traceId, command.submitter.segmentNameUtf8(), command.notify,
                    command.notifyLength);
            }
            finally
            {
                target.release();
            }
        }
    }

    @Override
    public void onClose()
    {
        localBorrow.release();
        remoteBorrow.release();
        if (localStage != null)
        {
            localStage.close(); // takes back what the kernel holds before failing it (borrows released after)
        }
        copier.close();
        storage.close();
    }

    @Override
    public String roleName()
    {
        return "xferd-transfer-" + index;
    }

    /**
     * @return true when a run's member may use the region the member before it found: still registered, and holding
     * the member's bytes (a region closed since is looked up afresh, so the member gets the status a lookup gives).
     */
    private static boolean stillCovers(final Region region, final long address, final long length)
    {
        return region != null && !region.isClosed() && region.contains(address, length);
    }
}
