package io.xferd.daemon.pipeline;

import com.lmax.disruptor.EventPoller;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.AccessPolicy;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.daemon.transport.RemoteSegments;
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
    private final AtomicCounter bytesRead;
    private final AtomicCounter bytesWritten;
    private final TransferJournal journal;
    private final RegionCopier copier;
    /** Refilled for every remote request this worker hands to the transport (allocation-free). */
    private final RemoteRequest remoteRequest = new RemoteRequest();
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
        this.copier = new RegionCopier(deviceMemory);
        this.completed = counters.get(SystemCounter.REQUESTS_COMPLETED);
        this.failed = counters.get(SystemCounter.REQUESTS_FAILED);
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
            final long bytes = status == TransferStatus.OK ? command.length : 0;
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
            sender.complete(submitter, command.batch, command.batchEntry, command.requestId, status, bytes,
                command.intakeNanos, completeNanos);
            journal.onCompleted(submitter.slot(), command.requestId, command.traceId, command.opcode, status,
                command.length, bytes, TransferJournal.PEER_LOCAL, TransferJournal.NIC_SHM, command.submitNanos,
                command.intakeNanos, completeNanos);
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
    }

    private int execute(final TransferCommand command)
    {
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
        final Region local = command.submitter.regions().find(command.localAddress, length);
        if (local != null && local.isDevice() && !transport.carriesDeviceMemory())
        {
            // TCP stages GPU memory through pinned host memory; RDMA would need GPUDirect, not in this build
            return TransferStatus.UNSUPPORTED_MEMORY;
        }
        if (local != null && local.isProcess() && !transport.carriesProcessMemory())
        {
            // a NIC cannot register another process's pages: process memory goes over TCP only
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
                .ids(command.requestId, command.traceId)
                .opcode(command.opcode)
                .local(local, command.localAddress)
                .target(target, command.targetAddress)
                .length(length)
                .times(command.submitNanos, command.intakeNanos)
                .notification(command.notify, command.notifyLength)
                .batch(command.batch, command.batchEntry));
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
    public String roleName()
    {
        return "xferd-transfer-" + index;
    }
}
