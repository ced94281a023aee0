package io.xferd.client;

import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.Opcode;
import io.xferd.nativebindings.libc.Memfd;
import io.xferd.nativebindings.libc.Process;

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
 * <p>
 * A facade: each call is done by one of the package-private parts the package description lists.
 */
public final class XferClient implements AutoCloseable
{
    private final DaemonProxy proxy;
    private final ClientRings rings;
    private final DaemonHeartbeat heartbeat;
    private final Welcome welcome;
    private final BatchTable batches;
    private final DaemonLiveness liveness;
    private final CompletionPoller poller;
    private final TransferSubmitter submitter;
    private final SyncTransfers syncTransfers;
    private final SharedBuffers sharedBuffers;
    private final MemoryRegistrar registrar;
    private final ReentrantLock controlLock = new ReentrantLock();
    private volatile boolean closed;

    /**
     * Handshake on a connected control socket, then map the rings and cnc.dat; on failure the socket is closed.
     */
    XferClient(final ClientContext context, final DaemonProxy proxy)
    {
        this.proxy = proxy;
        ClientRings mappedRings = null;
        try
        {
            welcome = ClientHandshake.perform(proxy, Process.pid(), context.segmentName(), context.listen());
            try
            {
                mappedRings = ClientRings.map(
                    welcome.ringsFd(), welcome.completionRingLength(), welcome.submitRingLength());
            }
            finally
            {
                Memfd.close(welcome.ringsFd());
            }
            heartbeat = DaemonHeartbeat.map(context.directory().resolve(CncFileDescriptor.CNC_FILE),
                context.epochClock());
        }
        catch (final RuntimeException ex)
        {
            if (mappedRings != null)
            {
                mappedRings.close();
            }
            proxy.close();
            throw ex;
        }
        rings = mappedRings;
        batches = new BatchTable(context.maxBatches());
        liveness = new DaemonLiveness(proxy, heartbeat, batches, context.nanoClock(), context.daemonCheckIntervalNs());
        poller = new CompletionPoller(rings.completionRing(), batches, liveness, context.nanoClock(),
            context.idleStrategy());
        submitter = new TransferSubmitter(rings.submitRing(), batches, poller, liveness, context.nanoClock(),
            context.idleStrategy(), context.controlTimeoutMs(), welcome.maxInFlight(), welcome.maxBatchEntries());
        syncTransfers = new SyncTransfers(batches, submitter, poller, context.controlTimeoutMs(),
            welcome.maxBatchEntries());
        sharedBuffers = new SharedBuffers("xferd-" + context.segmentName());
        registrar = new MemoryRegistrar(proxy, sharedBuffers);
    }

    /**
     * Connect to the daemon serving {@code context.directory()}, as segment {@code context.segmentName()}.
     *
     * @throws DaemonGoneException when no daemon serves that directory.
     * @throws ControlException    when the daemon refuses (name taken, daemon full, protocol version).
     */
    public static XferClient connect(final ClientContext context)
    {
        return new XferClient(context, DaemonProxy.connect(context.directory().resolve(CncFileDescriptor.SOCKET_FILE),
            context.controlTimeoutMs()));
    }

    // ---------------------------------------------------------------- memory

    /**
     * Allocate memory the daemon can map (a memfd mapped here). It is not registered yet.
     */
    public SharedBuffer allocateMemory(final long length)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            return sharedBuffers.allocate(length);
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
            registrar.registerMemory(address, length, location);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
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
        controlLock.lock();
        try
        {
            ensureOpen();
            registrar.registerProcessMemory(address, length, location);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * Register {@code length} bytes of a file or block device from {@code offset} as a storage region of this
     * client's segment, opened read-write with this process's permissions. Requests name it by the returned address
     * as they name memory (local READ/WRITE between memory and the file, and peers' requests to this segment); a
     * WRITE completes once its bytes are in the file. See docs/storage.md.
     *
     * @param flags {@link ControlMessages#REGISTER_FILE_SYNC} (fdatasync before each WRITE completes),
     *              {@link ControlMessages#REGISTER_FILE_BUFFERED} (keep the page cache even where O_DIRECT works).
     * @return the address that names the range's first byte.
     * @throws ControlException INVALID_ARGUMENT (range outside the file, not a file), MAP_FAILED (the daemon has no
     *                          io_uring), OVERLAPPING_REGION, LIMIT_REACHED.
     */
    public long registerFile(final java.nio.file.Path path, final long offset, final long length, final int flags)
    {
        return registerFile(path, false, offset, length, flags);
    }

    /**
     * As {@link #registerFile(java.nio.file.Path, long, long, int)}, opened read-only when {@code readOnly}: WRITEs
     * into it then fail with {@code STORAGE_PERMISSION}.
     */
    public long registerFile(
        final java.nio.file.Path path, final boolean readOnly, final long offset, final long length, final int flags)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            return registrar.registerFile(path, readOnly, offset, length, flags);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
        }
        finally
        {
            controlLock.unlock();
        }
    }

    /**
     * As {@link #registerFile(java.nio.file.Path, long, long, int)} for a descriptor this process already has open
     * (the daemon gets a duplicate; {@code fd} stays the caller's to close).
     */
    public long registerFile(final int fd, final long offset, final long length, final int flags)
    {
        controlLock.lock();
        try
        {
            ensureOpen();
            return registrar.registerFile(fd, offset, length, flags);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
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
        controlLock.lock();
        try
        {
            ensureOpen();
            registrar.registerGpuMemory(devicePointer, length, location, allocationBase);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
        }
        finally
        {
            controlLock.unlock();
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
            registrar.unregisterMemory(address);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
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
            sharedBuffers.free(buffer);
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
            return proxy.awaitOk(correlationId);
        }
        catch (final DaemonGoneException ex)
        {
            throw gone(ex);
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
        return welcome.segmentHandle();
    }

    /**
     * @return this client's full segment name, {@code host:port/name}.
     */
    public String segmentName()
    {
        return welcome.segmentName();
    }

    // ---------------------------------------------------------------- batches

    public long allocateBatch(final int batchSize)
    {
        ensureOpen();
        return batches.allocate(batchSize);
    }

    /**
     * Submit one request as the batch's next task; waits (bounded) while this client is at its in-flight
     * limit or the daemon's ring is full. Allocation-free.
     *
     * @return the task index within the batch.
     */
    public int submitTransfer(final long batchId, final TransferRequest request)
    {
        ensureOpen();
        return submitter.submit(batchId, request);
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
        ensureOpen();
        return submitter.submit(batchId, transfers);
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
        if (closed)
        {
            throw new IllegalStateException("client is closed");
        }
        return poller.awaitBatch(batchId, timeoutMs);
    }

    /**
     * Wait until at least one of the first {@code count} batches has every submitted task finished (keeping
     * several batches in flight, refill whichever finished first).
     *
     * @return the index in {@code batchIds} of a finished batch.
     * @throws DaemonGoneException when the daemon goes away meanwhile.
     * @throws XferException       when nothing completes for {@code timeoutMs}.
     */
    public int awaitAnyBatch(final long[] batchIds, final int count, final long timeoutMs)
    {
        if (closed)
        {
            throw new IllegalStateException("client is closed");
        }
        return poller.awaitAnyBatch(batchIds, count, timeoutMs);
    }

    public void freeBatch(final long batchId)
    {
        batches.free(batchId);
    }

    // ---------------------------------------------------------------- synchronous transfers

    public void transferSyncWrite(final long segment, final long localAddress, final long targetAddress,
        final long length)
    {
        ensureOpen();
        syncTransfers.transfer(Opcode.WRITE, segment, localAddress, targetAddress, length);
    }

    public void transferSyncRead(final long segment, final long localAddress, final long targetAddress,
        final long length)
    {
        ensureOpen();
        syncTransfers.transfer(Opcode.READ, segment, localAddress, targetAddress, length);
    }

    /**
     * As Mooncake's batch transfer: the ranges go as SUBMIT_BATCH records of up to {@link #maxBatchEntries()}
     * entries each, one completion per record.
     */
    public void batchTransferSyncWrite(final long segment, final long[] localAddresses, final long[] targetAddresses,
        final long[] lengths)
    {
        ensureOpen();
        syncTransfers.transfer(Opcode.WRITE, segment, localAddresses, targetAddresses, lengths);
    }

    public void batchTransferSyncRead(final long segment, final long[] localAddresses, final long[] targetAddresses,
        final long[] lengths)
    {
        ensureOpen();
        syncTransfers.transfer(Opcode.READ, segment, localAddresses, targetAddresses, lengths);
    }

    // ---------------------------------------------------------------- completions and notifications

    /**
     * Take the completions and notifications waiting on this client's ring; also notices a daemon that went
     * away (looking every 32nd poll that finds the ring empty: a caller spinning on it pays no clock read per poll,
     * one polling at its own slow pace notices within 32 of its polls; {@link #awaitBatch} looks at each).
     * Allocation-free but for notifications. Takes nothing once the client is closed.
     *
     * @return records taken.
     */
    public int poll()
    {
        return poller.poll();
    }

    /**
     * @return the notifications received since the last call (polls first).
     */
    public List<Notification> getNotifies()
    {
        poll();
        return poller.takeNotifications();
    }

    // ---------------------------------------------------------------- liveness

    /**
     * @return true when the daemon is known to be gone; pending tasks have been failed with DAEMON_GONE.
     */
    public boolean isDaemonGone()
    {
        return liveness.isGone();
    }

    public int maxInFlight()
    {
        return welcome.maxInFlight();
    }

    public long maxRequestLength()
    {
        return welcome.maxRequestLength();
    }

    /**
     * @return the most entries one {@link #submitBatch} may carry (the daemon's WELCOME says).
     */
    public int maxBatchEntries()
    {
        return welcome.maxBatchEntries();
    }

    /**
     * @return this segment's own RPC port when the context asked for one ({@link ClientContext#listen}), else 0.
     */
    public int segmentRpcPort()
    {
        return welcome.segmentRpcPort();
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
            // polls first: a poll reads the rings, the heartbeat and the socket that the next lines release
            poller.close();
            proxy.close();
            sharedBuffers.close();
            rings.close();
            heartbeat.close();
        }
        finally
        {
            controlLock.unlock();
        }
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("client is closed");
        }
        liveness.checkAlive();
    }

    private DaemonGoneException gone(final DaemonGoneException ex)
    {
        liveness.markGone(ex.getMessage());
        return ex;
    }

    private static void checkTask(final BatchTable.Batch batch, final int task)
    {
        if (task < 0 || task >= batch.capacity)
        {
            throw new IllegalArgumentException("task " + task + " outside batch of " + batch.capacity);
        }
    }
}
