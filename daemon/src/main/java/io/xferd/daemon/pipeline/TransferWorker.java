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
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.LangUtil;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A transfer stage: takes its share of commands from the pipeline, checks each against the registry (segment,
 * both ranges registered, length), moves the bytes between the two regions with one copy ({@link RegionCopier}:
 * a memory copy between host mappings, the GPU runtime's copy when a side is device memory), and writes the
 * completion (and the target's notification). Both regions are borrowed for the copy so that neither can be
 * unmapped under it. Allocation-free.
 */
public final class TransferWorker implements Agent, EventPoller.Handler<TransferCommand>
{
    private static final Logger LOG = LoggerFactory.getLogger(TransferWorker.class);
    /** Not a status: the request went to another daemon, whose answer completes it later. */
    private static final int HANDED_OFF = -1;
    /** Not a status: a merged command's requests were each answered or handed off on their own. */
    private static final int SPLIT = -2;

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
    /** Refilled for every remote request this worker hands to the transport (allocation-free). */
    private final RemoteRequest remoteRequest = new RemoteRequest();
    private final StorageIo storage;
    private final int nicFile;
    private final int nicNvme;
    private int localNic;
    private long bytesThisCycle;

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
            deviceMemory, access, StorageIo.DEFAULT_QUEUE_DEPTH);
    }

    /**
     * @param storageQueueDepth the most file operations this worker keeps in flight on its io_uring.
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
        final int storageQueueDepth)
    {
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
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS));
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
        try
        {
            return poller.poll(this) == EventPoller.PollState.PROCESSING ? 1 : 0;
        }
        catch (final Exception ex)
        {
            LangUtil.rethrowUnchecked(ex);
            return 0;
        }
    }

    /**
     * @return false to end this duty cycle once its byte budget is spent, so intake gets its turn.
     */
    @Override
    public boolean onEvent(final TransferCommand command, final long sequence, final boolean endOfBatch)
    {
        if ((sequence % workers) != index || command.submitter == null)
        {
            return true;
        }
        final ClientSession submitter = command.submitter;
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
        final long completeNanos = clock.nanoTime();
        final ClientSession submitter = command.submitter;
        sender.complete(submitter, batch, batchEntry, requestId, status, bytes, intakeNanos, completeNanos);
        journal.onCompleted(submitter.slot(), requestId, command.traceId, command.opcode, status, length, bytes,
            TransferJournal.PEER_LOCAL, localNic, submitNanos, intakeNanos, completeNanos);
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
        final Region local = command.submitter.regions().find(command.localAddress, length);
        if (local == null)
        {
            return TransferStatus.LOCAL_RANGE_NOT_REGISTERED;
        }
        final Region remote = target.regions().find(command.targetAddress, length);
        if (remote == null)
        {
            return TransferStatus.TARGET_RANGE_NOT_REGISTERED;
        }
        if (!local.tryAcquire())
        {
            return TransferStatus.LOCAL_RANGE_NOT_REGISTERED;
        }
        final int copied;
        try
        {
            if (!remote.tryAcquire())
            {
                return TransferStatus.TARGET_GONE;
            }
            try
            {
                final Region file = remote.isFile() ? remote : local.isFile() ? local : null;
                if (file != null)
                {
                    localNic = StorageFile.NVME.equals(file.file().label()) ? nicNvme : nicFile;
                }
                copied = copier.copy(command.opcode, local, command.localAddress, remote, command.targetAddress, length);
            }
            finally
            {
                remote.release();
            }
        }
        finally
        {
            local.release();
        }
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
        storage.close();
    }

    @Override
    public String roleName()
    {
        return "xferd-transfer-" + index;
    }
}
