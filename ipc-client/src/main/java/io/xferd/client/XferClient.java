package io.xferd.client;

import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.ipc.NotificationFlyweight;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.ProcessMemoryRegistration;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaPointerAttributes;
import io.xferd.nativebindings.cuda.CudaRuntime;
import io.xferd.nativebindings.libc.Process;
import org.agrona.IoUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;

import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-process client of the local xferd daemon, named after Mooncake's Transfer Engine API: share memory
 * ({@link #allocateMemory}, {@link #registerMemory}), open a target segment by name ({@link #openSegment}),
 * submit batches of READ/WRITE requests ({@link #allocateBatch}, {@link #submitTransfer},
 * {@link #getTransferStatus}, {@link #freeBatch}) or move bytes synchronously ({@link #transferSyncWrite},
 * {@link #transferSyncRead}), and receive notifications ({@link #getNotifies}).
 * <p>
 * Requests go into this client's own submit ring and completions come back on its own completion ring (both in
 * one shared-memory file the daemon made for this client alone): the bytes never pass through this process. Many
 * requests to one segment can go as one record with one completion ({@link #submitBatch}). Submitting and polling
 * allocate nothing. Control calls are thread-safe; submitting and polling are meant for one thread at a time (use
 * one client per thread, each with its own segment, to submit from several): the submit ring has exactly one
 * producer, and two threads writing it at once would corrupt it, which the daemon answers by cutting the client
 * off.
 */
public final class XferClient implements AutoCloseable
{
    private final ClientContext context;
    private final DaemonProxy proxy;
    private final MappedByteBuffer cncMapping;
    private final UnsafeBuffer cnc;
    private final RingBuffer submitRing;
    private final MemorySegment ringsMapping;
    private final ManyToOneRingBuffer completionRing;
    private final int clientSlot;
    private final int maxInFlight;
    private final int maxBatchEntries;
    private final int segmentRpcPort;
    private final long maxRequestLength;
    private final long ownSegmentHandle;
    private final String segmentName;
    private final long livenessTimeoutMs;
    private final DaemonHeartbeat heartbeat;
    private final BatchTable batches;
    private final ReentrantLock controlLock = new ReentrantLock();
    private final ReentrantLock pollLock = new ReentrantLock();
    private final SubmitRequestFlyweight submitFlyweight = new SubmitRequestFlyweight();
    private final SubmitBatchFlyweight batchFlyweight = new SubmitBatchFlyweight();
    private final UnsafeBuffer notifyView = new UnsafeBuffer(new byte[0]);
    private final CompletionFlyweight completionFlyweight = new CompletionFlyweight();
    private final NotificationFlyweight notificationFlyweight = new NotificationFlyweight();
    private final MessageHandler completionHandler = this::onCompletionRecord;
    private final List<Notification> notifications = new ArrayList<>();
    private final List<SharedBuffer> sharedBuffers = new ArrayList<>();
    private final TransferRequest syncRequest = new TransferRequest();
    private long syncBatch = -1;
    private int inFlight;
    private long nextDaemonCheckNs;
    private volatile String goneReason;
    private boolean closed;

    private XferClient(final ClientContext context)
    {
        this.context = context;
        this.proxy = DaemonProxy.connect(context.directory().resolve(CncFileDescriptor.SOCKET_FILE),
            context.controlTimeoutMs());
        try
        {
            proxy.begin(ControlMessages.HELLO)
                .putInt(ControlMessages.HELLO_VERSION, ControlMessages.PROTOCOL_VERSION)
                .putInt(ControlMessages.HELLO_PID, Process.pid())
                .putInt(ControlMessages.HELLO_FLAGS, context.listen() ? ControlMessages.HELLO_FLAG_LISTEN : 0)
                .putInt(ControlMessages.HELLO_FLAGS + 4, 0)
                .putString(ControlMessages.HELLO_NAME, context.segmentName());
            proxy.send(-1);
            final ControlFrame welcome = proxy.awaitAnswer();
            if (welcome.type() == ControlMessages.ERROR)
            {
                throw new ControlException(welcome.getInt(ControlMessages.ERROR_CODE),
                    welcome.getString(ControlMessages.ERROR_MESSAGE));
            }
            if (welcome.type() != ControlMessages.WELCOME)
            {
                throw new XferException("daemon answered HELLO with " + DaemonProxy.describe(welcome));
            }
            clientSlot = welcome.getInt(ControlMessages.WELCOME_CLIENT_SLOT);
            maxInFlight = welcome.getInt(ControlMessages.WELCOME_MAX_IN_FLIGHT);
            ownSegmentHandle = welcome.getLong(ControlMessages.WELCOME_SEGMENT_HANDLE);
            maxRequestLength = welcome.getLong(ControlMessages.WELCOME_MAX_REQUEST_LENGTH);
            maxBatchEntries = welcome.getInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES);
            segmentRpcPort = welcome.getInt(ControlMessages.WELCOME_SEGMENT_RPC_PORT);
            segmentName = welcome.getString(ControlMessages.WELCOME_SEGMENT_NAME);
            final int completionLength = welcome.getInt(ControlMessages.WELCOME_COMPLETION_RING_LENGTH);
            final int submitLength = welcome.getInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH);
            final int ringsFd = proxy.takeFd();
            if (ringsFd < 0)
            {
                throw new XferException("daemon's WELCOME carried no rings file descriptor");
            }
            final long ringsLength = RingsFileDescriptor.fileLength(completionLength, submitLength);
            try
            {
                ringsMapping = MappedMemory.mapShared(ringsFd, 0, ringsLength);
            }
            finally
            {
                Memfd.close(ringsFd);
            }
            final UnsafeBuffer rings = new UnsafeBuffer(ringsMapping.address(), (int)ringsLength);
            completionRing = new ManyToOneRingBuffer(RingsFileDescriptor.completionRing(rings, completionLength));
            // this client is the only producer of its submit ring: no CAS, Agrona's one-to-one protocol
            submitRing = new OneToOneRingBuffer(RingsFileDescriptor.submitRing(rings, completionLength, submitLength));

            cncMapping = IoUtil.mapExistingFile(context.directory().resolve(CncFileDescriptor.CNC_FILE).toFile(),
                "xferd cnc");
            cnc = new UnsafeBuffer(cncMapping);
            CncFileDescriptor.checkHeader(cnc);
            livenessTimeoutMs = CncFileDescriptor.livenessTimeoutMs(cnc);
            heartbeat = new DaemonHeartbeat(cnc, context.epochClock(), livenessTimeoutMs);
            batches = new BatchTable(context.maxBatches());
        }
        catch (final RuntimeException ex)
        {
            proxy.close();
            throw ex;
        }
    }

    /**
     * Connect to the daemon serving {@code context.directory()}, as segment {@code context.segmentName()}.
     *
     * @throws DaemonGoneException when no daemon serves that directory.
     * @throws ControlException    when the daemon refuses (name taken, daemon full, protocol version).
     */
    public static XferClient connect(final ClientContext context)
    {
        return new XferClient(context);
    }

    // ---------------------------------------------------------------- memory

    /**
     * Allocate memory the daemon can map (a memfd mapped here). It is not registered yet.
     */
    public SharedBuffer allocateMemory(final long length)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        controlLock.lock();
        try
        {
            ensureOpen();
            final int fd = Memfd.createSealable("xferd-" + context.segmentName());
            try
            {
                Memfd.truncate(fd, length);
                // the daemon maps only memory that cannot shrink under its copies (SIGBUS), and checks the seal
                Memfd.addSeals(fd, Memfd.SEAL_SHRINK);
                final SharedBuffer buffer = new SharedBuffer(fd, MappedMemory.mapShared(fd, 0, length));
                sharedBuffers.add(buffer);
                return buffer;
            }
            catch (final RuntimeException ex)
            {
                Memfd.close(fd);
                throw ex;
            }
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * Register [address, address + length) so that requests (this client's as local ranges, other clients' as
     * targets) may use it. Host memory must come from {@link #allocateMemory}. A range outside that memory with a
     * location "cuda:N" is taken for device memory, as with Mooncake's {@code registerLocalMemory(ptr, len,
     * "cuda:0")}: see {@link #registerGpuMemory(long, long, String)}.
     *
     * @param location where the memory lives: "cpu:0", "cuda:1" (for path selection).
     */
    public void registerMemory(final long address, final long length, final String location)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            final SharedBuffer buffer = findSharedBuffer(address, length);
            if (buffer == null && GpuMemoryRegistration.cudaOrdinal(location) >= 0)
            {
                registerGpuMemory(address, length, location, address);
                return;
            }
            if (buffer == null)
            {
                throw notShared(address, length);
            }
            final long correlationId = proxy.nextCorrelationId();
            proxy.begin(ControlMessages.REGISTER_MEMORY)
                .putLong(ControlMessages.CORRELATION_ID, correlationId)
                .putLong(ControlMessages.REGISTER_ADDRESS, address)
                .putLong(ControlMessages.REGISTER_LENGTH, length)
                .putLong(ControlMessages.REGISTER_FD_OFFSET, address - buffer.address())
                .putString(ControlMessages.REGISTER_LOCATION, location);
            proxy.send(buffer.fd());
            awaitOk(correlationId);
        }
        catch (final DaemonGoneException ex)
        {
            markGone(ex.getMessage());
            throw ex;
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * Register ordinary memory of this process that did not come from {@link #allocateMemory} (heap or anonymous
     * memory: what a framework allocated itself). The daemon cannot map it; it reaches it with
     * {@code process_vm_readv}/{@code process_vm_writev} on this process's pid, one copy through the kernel per
     * transfer (over TCP through the daemon's staging buffer; not over RDMA, where requests fail with
     * {@code UNSUPPORTED_MEMORY}). The kernel allows that where ptrace would be: the daemon runs with this process's
     * uid (or CAP_SYS_PTRACE), and under Yama's ptrace_scope 1 this process has named the daemon with
     * {@code prctl(PR_SET_PTRACER, daemonPid)}. Keep the memory mapped until it is unregistered: a transfer that
     * meets unmapped memory fails with {@code MEMORY_FAULT}.
     *
     * @param location "cpu:N" or "*".
     * @throws ControlException MAP_FAILED when the daemon may not reach this process's memory, INVALID_ARGUMENT when
     *                          the range's first or last byte is not mapped, OVERLAPPING_REGION, LIMIT_REACHED.
     */
    public void registerProcessMemory(final long address, final long length, final String location)
    {
        if (address <= 0 || length <= 0)
        {
            throw new IllegalArgumentException("bad range 0x" + Long.toHexString(address) + "+" + length);
        }
        controlLock.lock();
        try
        {
            ensureOpen();
            final long correlationId = proxy.nextCorrelationId();
            new ProcessMemoryRegistration(correlationId, address, length, location)
                .encode(proxy.begin(ControlMessages.REGISTER_PROCESS_MEMORY));
            proxy.send(-1);
            awaitOk(correlationId);
        }
        catch (final DaemonGoneException ex)
        {
            markGone(ex.getMessage());
            throw ex;
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * Register GPU memory that {@code devicePointer} starts, the base of a {@code cudaMalloc} allocation: the
     * daemon opens it through a CUDA IPC handle and copies straight to and from it. Keep the allocation alive until
     * it is unregistered ({@link #unregisterMemory}) or this client is closed.
     *
     * @param location "cuda:N", the device in this process's numbering (the daemon finds it by PCI bus id).
     * @throws CudaUnavailableException when this process has no usable CUDA runtime.
     * @throws ControlException         when the daemon refuses, e.g. {@code CUDA_UNAVAILABLE} when it has none.
     */
    public void registerGpuMemory(final long devicePointer, final long length, final String location)
    {
        registerGpuMemory(devicePointer, length, location, devicePointer);
    }

    /**
     * Register a range that starts inside a bigger allocation (a caching allocator's block) whose base is
     * {@code allocationBase}; the IPC handle is the allocation's, the range [devicePointer, devicePointer + length)
     * must lie within it.
     */
    public void registerGpuMemory(
        final long devicePointer, final long length, final String location, final long allocationBase)
    {
        if (GpuMemoryRegistration.cudaOrdinal(location) < 0)
        {
            throw new IllegalArgumentException("GPU memory needs a location cuda:N, not " + location);
        }
        if (length <= 0 || devicePointer < allocationBase)
        {
            throw new IllegalArgumentException("bad GPU range 0x" + Long.toHexString(devicePointer) + "+" + length +
                " in the allocation at 0x" + Long.toHexString(allocationBase));
        }
        final Availability cuda = CudaRuntime.availability();
        if (!cuda.isAvailable())
        {
            throw new CudaUnavailableException("cannot register GPU memory: CUDA is not available in this process (" +
                cuda.reason() + ")");
        }
        controlLock.lock();
        try
        {
            ensureOpen();
            final long correlationId = proxy.nextCorrelationId();
            exportGpuMemory(correlationId, devicePointer, length, location, allocationBase)
                .encode(proxy.begin(ControlMessages.REGISTER_GPU_MEMORY));
            proxy.send(-1);
            awaitOk(correlationId);
        }
        catch (final DaemonGoneException ex)
        {
            markGone(ex.getMessage());
            throw ex;
        }
        finally
        {
            controlLock.unlock();
        }
    }

    private static GpuMemoryRegistration exportGpuMemory(
        final long correlationId, final long devicePointer, final long length, final String location,
        final long allocationBase)
    {
        try
        {
            final CudaPointerAttributes attributes = CudaRuntime.pointerAttributes(devicePointer);
            if (!attributes.isDevice())
            {
                throw new IllegalArgumentException("0x" + Long.toHexString(devicePointer) +
                    " is not device memory (cudaPointerGetAttributes type " + attributes.type() + ")");
            }
            // export on the memory's own device, as a device guard would, and give the caller's thread its own back
            final int current = CudaRuntime.getDevice();
            if (current != attributes.device())
            {
                CudaRuntime.setDevice(attributes.device());
            }
            try
            {
                return new GpuMemoryRegistration(correlationId, devicePointer, length, devicePointer - allocationBase,
                    CudaRuntime.ipcGetMemHandle(allocationBase).toBytes(), CudaRuntime.pciBusId(attributes.device()),
                    location);
            }
            finally
            {
                if (current != attributes.device())
                {
                    CudaRuntime.setDevice(current);
                }
            }
        }
        catch (final io.xferd.nativebindings.cuda.CudaException ex)
        {
            throw new XferException("cannot export GPU memory 0x" + Long.toHexString(devicePointer) + ": " +
                ex.getMessage(), ex);
        }
    }

    public void registerMemory(final SharedBuffer buffer, final String location)
    {
        registerMemory(buffer.address(), buffer.length(), location);
    }

    public void batchRegisterMemory(final long[] addresses, final long[] lengths, final String location)
    {
        if (addresses.length != lengths.length)
        {
            throw new IllegalArgumentException("addresses and lengths differ in count");
        }
        for (int i = 0; i < addresses.length; i++)
        {
            registerMemory(addresses[i], lengths[i], location);
        }
    }

    /**
     * Unregister the range that starts at {@code address}; returns once no transfer touches it any more.
     */
    public void unregisterMemory(final long address)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            final long correlationId = proxy.nextCorrelationId();
            proxy.begin(ControlMessages.UNREGISTER_MEMORY)
                .putLong(ControlMessages.CORRELATION_ID, correlationId)
                .putLong(ControlMessages.UNREGISTER_ADDRESS, address);
            proxy.send(-1);
            awaitOk(correlationId);
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * Unmap memory from {@link #allocateMemory}; unregister its ranges first.
     */
    public void freeMemory(final SharedBuffer buffer)
    {
        controlLock.lock();
        try
        {
            if (sharedBuffers.remove(buffer))
            {
                MappedMemory.unmap(buffer.segment());
                Memfd.close(buffer.fd());
            }
        }
        finally
        {
            controlLock.unlock();
        }
    }

    // ---------------------------------------------------------------- segments

    /**
     * @param name a segment name on this host ("decode-0" or "host:port/decode-0").
     * @return the handle requests use to target it.
     */
    public long openSegment(final String name)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            final long correlationId = proxy.nextCorrelationId();
            proxy.begin(ControlMessages.OPEN_SEGMENT)
                .putLong(ControlMessages.CORRELATION_ID, correlationId)
                .putString(ControlMessages.OPEN_SEGMENT_NAME, name);
            proxy.send(-1);
            return awaitOk(correlationId);
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * @return the handle of this client's own segment (for loop-back transfers).
     */
    public long ownSegment()
    {
        return ownSegmentHandle;
    }

    /**
     * @return this client's full segment name, {@code host:port/name}.
     */
    public String segmentName()
    {
        return segmentName;
    }

    // ---------------------------------------------------------------- batches

    public long allocateBatch(final int batchSize)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            return batches.allocate(batchSize);
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * Submit one request as the batch's next task; waits (bounded) while this client is at its in-flight
     * limit or the daemon's ring is full. Allocation-free.
     *
     * @return the task index within the batch.
     */
    public int submitTransfer(final long batchId, final TransferRequest request)
    {
        checkGone();
        final BatchTable.Batch batch = batches.batch(batchId);
        if (batch.submitted >= batch.capacity)
        {
            throw new IllegalStateException("batch " + batchId + " is full (" + batch.capacity + " tasks)");
        }
        final byte[] notify = request.notifyMessage();
        final int notifyLength = notify == null ? 0 : notify.length;
        if (notifyLength > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH)
        {
            throw new IllegalArgumentException("notify message longer than " +
                SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + " bytes: " + notifyLength);
        }
        final int task = batch.submitted;
        final long requestId = batch.requestId(task);
        final int recordLength = SubmitRequestFlyweight.recordLength(notifyLength);
        final int index = claimRecord(RecordTypes.SUBMIT, recordLength, "a request");
        final long now = startTask(batch, task);
        final SubmitRequestFlyweight record = submitFlyweight.wrap(submitRing.buffer(), index)
            .clearReserved()
            .opcode(request.opcode())
            .requestId(requestId)
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
        return task;
    }

    /**
     * Submit every entry of {@code transfers} as the batch's next task, in ONE submit ring record answered by ONE
     * completion: the task completes OK only when every entry landed, else it fails with the status of the
     * lowest-index entry that failed; its bytes are the entries' total. A notify on a WRITE reaches the target's
     * owner once every entry landed. Waits (bounded) while this client is at its in-flight limit (the batch counts
     * as one) or its ring is full. Allocation-free.
     *
     * @return the task index within the batch.
     * @throws IllegalArgumentException when the batch is empty or has more than {@link #maxBatchEntries()} entries.
     */
    public int submitBatch(final long batchId, final TransferBatch transfers)
    {
        checkGone();
        final int entries = transfers.size();
        if (entries < 1 || entries > maxBatchEntries)
        {
            throw new IllegalArgumentException("a batch has 1.." + maxBatchEntries + " entries, not " + entries);
        }
        final BatchTable.Batch batch = batches.batch(batchId);
        if (batch.submitted >= batch.capacity)
        {
            throw new IllegalStateException("batch " + batchId + " is full (" + batch.capacity + " tasks)");
        }
        final byte[] notify = transfers.opcode() == Opcode.WRITE ? transfers.notifyMessage() : null;
        final int notifyLength = notify == null ? 0 : notify.length;
        final int task = batch.submitted;
        final long requestId = batch.requestId(task);
        final int bodyLength = SubmitBatchFlyweight.bodyLength(entries, notifyLength);
        final int index = claimRecord(RecordTypes.SUBMIT_BATCH, bodyLength, "a batch");
        final long now = startTask(batch, task);
        if (notifyLength > 0)
        {
            notifyView.wrap(notify);
        }
        final SubmitBatchFlyweight record = batchFlyweight.wrap(submitRing.buffer(), index)
            .header(requestId, transfers.opcode(), entries, transfers.segment(), transfers.traceId(), now,
                notifyView, 0, notifyLength);
        for (int i = 0; i < entries; i++)
        {
            record.entry(i, transfers.localAddress(i), transfers.targetAddress(i), transfers.length(i));
        }
        submitRing.commit(index);
        return task;
    }

    /**
     * Claim room for one record in this client's submit ring, polling completions while at the in-flight limit or
     * while the ring is full, for at most the control timeout.
     *
     * @return the claimed record's index, to be committed once written.
     */
    private int claimRecord(final int type, final int length, final String what)
    {
        final IdleStrategy idle = context.idleStrategy();
        final long deadline = System.nanoTime() + context.controlTimeoutMs() * 1_000_000L;
        idle.reset();
        while (true)
        {
            if (inFlight < maxInFlight)
            {
                final int index = submitRing.tryClaim(type, length);
                if (index > 0)
                {
                    return index;
                }
            }
            idle.idle(poll());
            if (System.nanoTime() > deadline)
            {
                throw new XferException("could not submit " + what + " within " + context.controlTimeoutMs() +
                    " ms: submit ring full or " + inFlight + " requests in flight");
            }
        }
    }

    /**
     * Account the batch's next task as in flight from now.
     *
     * @return its submit time.
     */
    private long startTask(final BatchTable.Batch batch, final int task)
    {
        final long now = System.nanoTime();
        batch.state[task] = TaskStatus.PENDING;
        batch.submitNanos[task] = now;
        batch.submitted++;
        batch.pending++;
        inFlight++;
        return now;
    }

    public void submitTransfer(final long batchId, final List<TransferRequest> requests)
    {
        for (final TransferRequest request : requests)
        {
            submitTransfer(batchId, request);
        }
    }

    /**
     * Poll completions, then report one task. Allocates the returned record; see {@link #taskState} for the
     * allocation-free form.
     */
    public TaskStatus getTransferStatus(final long batchId, final int task)
    {
        poll();
        final BatchTable.Batch batch = batches.batch(batchId);
        checkTask(batch, task);
        return new TaskStatus(batch.state[task], batch.status[task], batch.bytes[task]);
    }

    /**
     * @return {@link TaskStatus#WAITING}, PENDING, COMPLETED or FAILED, without polling.
     */
    public int taskState(final long batchId, final int task)
    {
        final BatchTable.Batch batch = batches.batch(batchId);
        checkTask(batch, task);
        return batch.state[task];
    }

    /**
     * @return nanoseconds from submit to the completion being seen by this client, or -1 while pending.
     */
    public long taskLatencyNanos(final long batchId, final int task)
    {
        final BatchTable.Batch batch = batches.batch(batchId);
        checkTask(batch, task);
        return batch.state[task] == TaskStatus.COMPLETED || batch.state[task] == TaskStatus.FAILED ?
            batch.completeNanos[task] - batch.submitNanos[task] : -1;
    }

    /**
     * @return the number of tasks of the batch not yet finished, after polling.
     */
    public int pendingTasks(final long batchId)
    {
        poll();
        return batches.batch(batchId).pending;
    }

    /**
     * Wait until every submitted task of the batch finished.
     *
     * @return true when all completed OK.
     * @throws DaemonGoneException when the daemon goes away meanwhile.
     * @throws XferException       when nothing completes for {@code timeoutMs}.
     */
    public boolean awaitBatch(final long batchId, final long timeoutMs)
    {
        final BatchTable.Batch batch = batches.batch(batchId);
        final IdleStrategy idle = context.idleStrategy();
        idle.reset();
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (batch.pending > 0)
        {
            final int work = poll();
            if (work > 0)
            {
                deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            }
            else
            {
                checkGone();
                if (System.nanoTime() > deadline)
                {
                    throw new XferException("batch " + batchId + ": " + batch.pending +
                        " task(s) without completion for " + timeoutMs + " ms");
                }
            }
            idle.idle(work);
        }
        checkGone();
        for (int task = 0; task < batch.submitted; task++)
        {
            if (batch.state[task] != TaskStatus.COMPLETED)
            {
                return false;
            }
        }
        return true;
    }

    public void freeBatch(final long batchId)
    {
        controlLock.lock();
        try
        {
            batches.free(batchId);
        }
        finally
        {
            controlLock.unlock();
        }
    }

    // ---------------------------------------------------------------- synchronous transfers

    public void transferSyncWrite(final long segment, final long localAddress, final long targetAddress,
        final long length)
    {
        transferSync(Opcode.WRITE, segment, localAddress, targetAddress, length);
    }

    public void transferSyncRead(final long segment, final long localAddress, final long targetAddress,
        final long length)
    {
        transferSync(Opcode.READ, segment, localAddress, targetAddress, length);
    }

    public void batchTransferSyncWrite(final long segment, final long[] localAddresses, final long[] targetAddresses,
        final long[] lengths)
    {
        batchTransferSync(Opcode.WRITE, segment, localAddresses, targetAddresses, lengths);
    }

    public void batchTransferSyncRead(final long segment, final long[] localAddresses, final long[] targetAddresses,
        final long[] lengths)
    {
        batchTransferSync(Opcode.READ, segment, localAddresses, targetAddresses, lengths);
    }

    private synchronized void transferSync(
        final int opcode, final long segment, final long localAddress, final long targetAddress, final long length)
    {
        if (syncBatch < 0)
        {
            syncBatch = allocateBatch(1);
        }
        try
        {
            submitTransfer(syncBatch, syncRequest.set(opcode, localAddress, segment, targetAddress, length));
            if (!awaitBatch(syncBatch, context.controlTimeoutMs()))
            {
                throw new TransferFailedException(Opcode.name(opcode), batches.batch(syncBatch).status[0]);
            }
        }
        finally
        {
            if (batches.batch(syncBatch).pending == 0)
            {
                batches.free(syncBatch);
                syncBatch = allocateBatch(1);
            }
        }
    }

    /**
     * As Mooncake's batch transfer: the ranges go as SUBMIT_BATCH records of up to {@link #maxBatchEntries()}
     * entries each, one completion per record.
     */
    private void batchTransferSync(final int opcode, final long segment, final long[] localAddresses,
        final long[] targetAddresses, final long[] lengths)
    {
        if (localAddresses.length != targetAddresses.length || localAddresses.length != lengths.length)
        {
            throw new IllegalArgumentException("addresses and lengths differ in count");
        }
        if (localAddresses.length == 0)
        {
            return;
        }
        final int records = (localAddresses.length + maxBatchEntries - 1) / maxBatchEntries;
        final long batchId = allocateBatch(records);
        final TransferBatch transfers = new TransferBatch(Math.min(localAddresses.length, maxBatchEntries));
        for (int first = 0; first < localAddresses.length; first += maxBatchEntries)
        {
            transfers.reset(opcode, segment);
            for (int i = first; i < Math.min(localAddresses.length, first + maxBatchEntries); i++)
            {
                transfers.add(localAddresses[i], targetAddresses[i], lengths[i]);
            }
            submitBatch(batchId, transfers);
        }
        final boolean ok = awaitBatch(batchId, context.controlTimeoutMs());
        int firstFailure = TransferStatus.OK;
        final BatchTable.Batch batch = batches.batch(batchId);
        for (int i = 0; i < batch.submitted && firstFailure == TransferStatus.OK; i++)
        {
            firstFailure = batch.status[i];
        }
        freeBatch(batchId);
        if (!ok)
        {
            throw new TransferFailedException(Opcode.name(opcode), firstFailure);
        }
    }

    // ---------------------------------------------------------------- completions and notifications

    /**
     * Take the completions and notifications waiting on this client's ring; also notices a daemon that went
     * away. Allocation-free but for notifications.
     *
     * @return records taken.
     */
    public int poll()
    {
        if (!pollLock.tryLock())
        {
            return 0;
        }
        try
        {
            final int work = completionRing.read(completionHandler, 256);
            if (work == 0)
            {
                final long now = System.nanoTime();
                if (now >= nextDaemonCheckNs)
                {
                    nextDaemonCheckNs = now + context.daemonCheckIntervalNs();
                    checkDaemon();
                }
            }
            return work;
        }
        finally
        {
            pollLock.unlock();
        }
    }

    private void onCompletionRecord(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (type == RecordTypes.COMPLETION)
        {
            completionFlyweight.wrap(buffer, index);
            if (batches.complete(completionFlyweight.requestId(), completionFlyweight.status(),
                completionFlyweight.bytesTransferred(), System.nanoTime()))
            {
                inFlight--;
            }
        }
        else if (type == RecordTypes.NOTIFICATION)
        {
            notificationFlyweight.wrap(buffer, index);
            synchronized (notifications)
            {
                notifications.add(new Notification(notificationFlyweight.sourceName(),
                    notificationFlyweight.message(), notificationFlyweight.traceId()));
            }
        }
    }

    /**
     * @return the notifications received since the last call (polls first).
     */
    public List<Notification> getNotifies()
    {
        poll();
        synchronized (notifications)
        {
            final List<Notification> copy = new ArrayList<>(notifications);
            notifications.clear();
            return copy;
        }
    }

    // ---------------------------------------------------------------- liveness

    private void checkDaemon()
    {
        if (goneReason != null)
        {
            return;
        }
        if (!proxy.isDaemonConnected())
        {
            markGone("daemon closed the connection");
        }
        else
        {
            final String stale = heartbeat.staleReason();
            if (stale != null)
            {
                markGone(stale);
            }
        }
    }

    private void markGone(final String reason)
    {
        if (goneReason == null)
        {
            goneReason = reason;
            batches.failAllPending(TransferStatus.DAEMON_GONE);
            inFlight = 0;
        }
    }

    /**
     * @return true when the daemon is known to be gone; pending tasks have been failed with DAEMON_GONE.
     */
    public boolean isDaemonGone()
    {
        return goneReason != null;
    }

    private void checkGone()
    {
        if (goneReason != null)
        {
            throw new DaemonGoneException(goneReason);
        }
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("client is closed");
        }
        checkGone();
    }

    private long awaitOk(final long correlationId)
    {
        final ControlFrame answer;
        try
        {
            answer = proxy.awaitAnswer();
        }
        catch (final DaemonGoneException ex)
        {
            markGone(ex.getMessage());
            throw ex;
        }
        if (answer.getLong(ControlMessages.CORRELATION_ID) != correlationId)
        {
            throw new XferException("daemon answered another request (" +
                answer.getLong(ControlMessages.CORRELATION_ID) + " != " + correlationId + ")");
        }
        if (answer.type() == ControlMessages.ERROR)
        {
            throw new ControlException(answer.getInt(ControlMessages.ERROR_CODE),
                answer.getString(ControlMessages.ERROR_MESSAGE));
        }
        if (answer.type() != ControlMessages.OK)
        {
            throw new XferException("unexpected answer: " + DaemonProxy.describe(answer));
        }
        return answer.getLong(ControlMessages.OK_VALUE);
    }

    private SharedBuffer findSharedBuffer(final long address, final long length)
    {
        for (final SharedBuffer buffer : sharedBuffers)
        {
            if (buffer.contains(address, length))
            {
                return buffer;
            }
        }
        return null;
    }

    private static IllegalArgumentException notShared(final long address, final long length)
    {
        return new IllegalArgumentException("0x" + Long.toHexString(address) + "+" + length +
            " is not inside memory from allocateMemory(): the daemon can only map shared memory" +
            " (GPU memory: a location cuda:N; other memory of this process: registerProcessMemory)");
    }

    private static void checkTask(final BatchTable.Batch batch, final int task)
    {
        if (task < 0 || task >= batch.capacity)
        {
            throw new IllegalArgumentException("task " + task + " outside batch of " + batch.capacity);
        }
    }

    public int maxInFlight()
    {
        return maxInFlight;
    }

    public long maxRequestLength()
    {
        return maxRequestLength;
    }

    /**
     * @return the most entries one {@link #submitBatch} may carry (the daemon's WELCOME says).
     */
    public int maxBatchEntries()
    {
        return maxBatchEntries;
    }

    /**
     * @return this segment's own RPC port when the context asked for one ({@link ClientContext#listen}), else 0.
     */
    public int segmentRpcPort()
    {
        return segmentRpcPort;
    }

    /**
     * Disconnect: the daemon frees everything this client registered. Memory from {@link #allocateMemory} is
     * unmapped too.
     */
    @Override
    public void close()
    {
        controlLock.lock();
        try
        {
            if (closed)
            {
                return;
            }
            closed = true;
            proxy.close();
            for (final SharedBuffer buffer : sharedBuffers)
            {
                MappedMemory.unmap(buffer.segment());
                Memfd.close(buffer.fd());
            }
            sharedBuffers.clear();
            MappedMemory.unmap(ringsMapping);
            IoUtil.unmap(cncMapping);
        }
        finally
        {
            controlLock.unlock();
        }
    }
}
