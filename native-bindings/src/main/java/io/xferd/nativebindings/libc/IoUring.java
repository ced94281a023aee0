package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static io.xferd.nativebindings.libc.IoUringLayouts.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One io_uring instance through raw {@code io_uring_setup(2)}/{@code io_uring_enter(2)} (glibc's {@code syscall};
 * no liburing) and the rings the kernel shares by mmap: the caller prepares reads, writes and fsyncs into the
 * submission ring, submits them with one system call, and reaps completions in a batch, calling a handler kept by
 * the caller (no allocation on the data path).
 * <p>
 * Memory order follows the kernel's contract: the submission tail and the completion head are stored with release,
 * the submission head and the completion tail loaded with acquire. The completion ring has twice the entries of the
 * submission ring (the kernel default); a caller that keeps at most {@link #entries()} operations in flight can never
 * overflow it. One thread only.
 */
public final class IoUring implements AutoCloseable
{
    /**
     * Receives one completion: the submission's {@code userData} and its result (bytes moved, 0, or -errno).
     */
    @FunctionalInterface
    public interface CompletionHandler
    {
        void onCompletion(long userData, int result);
    }

    private static final VarHandle INT = JAVA_INT.varHandle();
    // long syscall(long number, ...): io_uring_setup(u32 entries, struct io_uring_params *)
    private static final MethodHandle SETUP = Libc.downcallVariadicCapturingErrno("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);
    // io_uring_enter(int fd, u32 to_submit, u32 min_complete, u32 flags, sigset_t *sig, size_t sigsz)
    private static final MethodHandle ENTER = Libc.downcallVariadicCapturingErrno("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
        1);

    private final int fd;
    private final int entries;
    private final MemorySegment sqRing;
    private final MemorySegment cqRing;
    private final MemorySegment sqes;
    private final long sqHead;
    private final long sqTail;
    private final int sqMask;
    private final long sqArray;
    private final long cqHead;
    private final long cqTail;
    private final int cqMask;
    private final long cqes;
    private final boolean extArg;
    // io_uring_getevents_arg and the __kernel_timespec it points at, for waits with a timeout
    private final Arena waitArena;
    private final MemorySegment waitArg;
    private final MemorySegment waitTimeout;
    private int tail;
    private int pending;
    private boolean closed;

    private IoUring(final int fd, final MemorySegment params, final MemorySegment sqRing, final MemorySegment cqRing,
        final MemorySegment sqes)
    {
        this.fd = fd;
        this.entries = params.get(JAVA_INT, PARAMS_SQ_ENTRIES);
        this.sqRing = sqRing;
        this.cqRing = cqRing;
        this.sqes = sqes;
        this.sqHead = params.get(JAVA_INT, sq("head"));
        this.sqTail = params.get(JAVA_INT, sq("tail"));
        this.sqMask = sqRing.get(JAVA_INT, params.get(JAVA_INT, sq("ring_mask")));
        this.sqArray = params.get(JAVA_INT, sq("array"));
        this.cqHead = params.get(JAVA_INT, cq("head"));
        this.cqTail = params.get(JAVA_INT, cq("tail"));
        this.cqMask = cqRing.get(JAVA_INT, params.get(JAVA_INT, cq("ring_mask")));
        this.cqes = params.get(JAVA_INT, cq("cqes"));
        this.tail = (int)INT.getAcquire(sqRing, sqTail);
        this.extArg = (params.get(JAVA_INT, PARAMS_FEATURES) & IORING_FEAT_EXT_ARG) != 0;
        this.waitArena = Arena.ofShared();
        this.waitArg = waitArena.allocate(GETEVENTS_ARG_SIZE, 8);
        this.waitTimeout = waitArena.allocate(TIMESPEC_SIZE, 8);
        waitArg.set(JAVA_LONG, GETEVENTS_ARG_TS, waitTimeout.address());
    }

    /**
     * Sets up a ring of {@code entries} submissions (rounded up to a power of two by the kernel).
     *
     * @throws NativeException ENOSYS where the kernel has no io_uring (or a seccomp filter hides it), EPERM where
     *                         {@code kernel.io_uring_disabled} forbids it, ENOMEM beyond the locked-memory limit.
     */
    public static IoUring open(final int entries)
    {
        if (entries <= 0 || entries > 4096)
        {
            throw new IllegalArgumentException("io_uring entries must be in 1..4096: " + entries);
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment params = arena.allocate(IO_URING_PARAMS);
            final MemorySegment capture = CallScratch.capture();
            final long result;
            try
            {
                result = (long)SETUP.invokeExact(capture, (long)SYS_IO_URING_SETUP, (long)entries, params.address());
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (result < 0)
            {
                throw new NativeException("io_uring_setup", CallScratch.errno(capture), "entries=" + entries);
            }
            final int ringFd = (int)result;
            try
            {
                return map(ringFd, params);
            }
            catch (final RuntimeException ex)
            {
                FileDescriptors.closeQuietly(ringFd);
                throw ex;
            }
        }
    }

    private static IoUring map(final int ringFd, final MemorySegment params)
    {
        final int sqEntries = params.get(JAVA_INT, PARAMS_SQ_ENTRIES);
        final int cqEntries = params.get(JAVA_INT, PARAMS_CQ_ENTRIES);
        final long sqSize = params.get(JAVA_INT, sq("array")) + 4L * sqEntries;
        final long cqSize = params.get(JAVA_INT, cq("cqes")) + CQE_SIZE * cqEntries;
        final boolean single = (params.get(JAVA_INT, PARAMS_FEATURES) & IORING_FEAT_SINGLE_MMAP) != 0;
        final MemorySegment sqRing =
            MappedMemory.mapSharedPopulated(ringFd, IORING_OFF_SQ_RING, single ? Math.max(sqSize, cqSize) : sqSize);
        MemorySegment cqRing = sqRing;
        MemorySegment sqes = null;
        try
        {
            if (!single)
            {
                cqRing = MappedMemory.mapSharedPopulated(ringFd, IORING_OFF_CQ_RING, cqSize);
            }
            sqes = MappedMemory.mapSharedPopulated(ringFd, IORING_OFF_SQES, SQE_SIZE * sqEntries);
            return new IoUring(ringFd, params, sqRing, cqRing, sqes);
        }
        catch (final RuntimeException ex)
        {
            MappedMemory.unmap(sqRing);
            if (cqRing != sqRing)
            {
                MappedMemory.unmap(cqRing);
            }
            if (sqes != null)
            {
                MappedMemory.unmap(sqes);
            }
            throw ex;
        }
    }

    /**
     * @return true where this process may set up an io_uring (a probe: one ring made and closed).
     */
    public static boolean isAvailable()
    {
        try (IoUring ignored = open(1))
        {
            return true;
        }
        catch (final NativeException ex)
        {
            return false;
        }
    }

    /**
     * @return the submission ring's size: the most operations to keep in flight.
     */
    public int entries()
    {
        return entries;
    }

    /**
     * @return submission slots free now (prepared but unsubmitted entries count as used).
     */
    public int freeSlots()
    {
        return entries - (tail - (int)INT.getAcquire(sqRing, sqHead));
    }

    /**
     * Prepares {@code pread(fd, address, length, fileOffset)}.
     *
     * @return false when the submission ring is full (submit and reap first).
     */
    public boolean prepareRead(
        final int fd, final long address, final int length, final long fileOffset, final long userData)
    {
        return prepare(IORING_OP_READ, (byte)0, fd, address, length, fileOffset, 0, userData);
    }

    /**
     * Prepares {@code pwrite(fd, address, length, fileOffset)}.
     *
     * @return false when the submission ring is full.
     */
    public boolean prepareWrite(
        final int fd, final long address, final int length, final long fileOffset, final long userData)
    {
        return prepare(IORING_OP_WRITE, (byte)0, fd, address, length, fileOffset, 0, userData);
    }

    /**
     * Prepares {@code fdatasync(fd)} (or {@code fsync} when {@code dataOnly} is false). It is not ordered after
     * earlier submissions: submit it once the writes it must cover have completed.
     *
     * @return false when the submission ring is full.
     */
    public boolean prepareFsync(final int fd, final boolean dataOnly, final long userData)
    {
        return prepare(IORING_OP_FSYNC, (byte)0, fd, 0, 0, 0, dataOnly ? IORING_FSYNC_DATASYNC : 0, userData);
    }

    /**
     * Prepares a one-shot poll for {@code fd} becoming readable (an {@link EventFd} another thread signals): its
     * completion (result: the events, or -ECANCELED) ends a wait in {@link #submitAndWait}.
     *
     * @return false when the submission ring is full.
     */
    public boolean preparePollIn(final int fd, final long userData)
    {
        return prepare(IORING_OP_POLL_ADD, (byte)0, fd, 0, 0, 0, POLLIN, userData);
    }

    /**
     * Prepares the cancellation of every operation in flight on this ring ({@code IORING_ASYNC_CANCEL_ANY | ALL},
     * Linux 5.19): those not yet started complete with -ECANCELED, those the device already has complete as they
     * would have. Its own completion (the number cancelled, or -ENOENT) carries {@code userData}.
     *
     * @return false when the submission ring is full.
     */
    public boolean prepareCancelAll(final long userData)
    {
        return prepare(IORING_OP_ASYNC_CANCEL, (byte)0, -1, 0, 0, 0,
            IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL, userData);
    }

    /**
     * Prepares the cancellation of the operation in flight whose user data is {@code target} (Linux 5.5): one not yet
     * started completes with -ECANCELED; one the device already has completes as it would have (this cancellation's
     * own completion, carrying {@code userData}, is then -EALREADY, or -ENOENT when it had already ended).
     *
     * @return false when the submission ring is full.
     */
    public boolean prepareCancel(final long target, final long userData)
    {
        return prepare(IORING_OP_ASYNC_CANCEL, (byte)0, -1, target, 0, 0, 0, userData);
    }

    private boolean prepare(
        final byte opcode,
        final byte flags,
        final int fd,
        final long address,
        final int length,
        final long fileOffset,
        final int opFlags,
        final long userData)
    {
        if (freeSlots() <= 0)
        {
            return false;
        }
        final int index = tail & sqMask;
        final long sqe = index * SQE_SIZE;
        for (long word = 0; word < SQE_SIZE; word += 8)
        {
            sqes.set(JAVA_LONG, sqe + word, 0L);
        }
        sqes.set(JAVA_BYTE, sqe + SQE_OPCODE, opcode);
        sqes.set(JAVA_BYTE, sqe + SQE_FLAGS, flags);
        sqes.set(JAVA_INT, sqe + SQE_FD, fd);
        sqes.set(JAVA_LONG, sqe + SQE_OFF, fileOffset);
        sqes.set(JAVA_LONG, sqe + SQE_ADDR, address);
        sqes.set(JAVA_INT, sqe + SQE_LEN, length);
        sqes.set(JAVA_INT, sqe + SQE_RW_FLAGS, opFlags);
        sqes.set(JAVA_LONG, sqe + SQE_USER_DATA, userData);
        sqRing.set(JAVA_INT, sqArray + 4L * index, index);
        tail++;
        pending++;
        return true;
    }

    /**
     * Hands every prepared entry to the kernel without waiting.
     *
     * @return how many the kernel took.
     */
    public int submit()
    {
        return enter(0, 0);
    }

    /**
     * Hands every prepared entry to the kernel and waits until at least {@code minComplete} completions are ready
     * (an interrupted wait returns early: callers loop on what {@link #reap} finds).
     *
     * @return how many submissions the kernel took.
     */
    public int submitAndWait(final int minComplete)
    {
        return enter(minComplete, IORING_ENTER_GETEVENTS);
    }

    /**
     * As {@link #submitAndWait(int)}, waiting at most {@code timeoutNanos} (Linux 5.11's {@code EXT_ARG}; where the
     * kernel lacks it, the wait has no bound).
     *
     * @return how many submissions the kernel took.
     */
    public int submitAndWait(final int minComplete, final long timeoutNanos)
    {
        if (!extArg)
        {
            return enter(minComplete, IORING_ENTER_GETEVENTS);
        }
        waitTimeout.set(JAVA_LONG, 0, timeoutNanos / 1_000_000_000L);
        waitTimeout.set(JAVA_LONG, 8, timeoutNanos % 1_000_000_000L);
        return enter(minComplete, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, waitArg.address(),
            GETEVENTS_ARG_SIZE);
    }

    private int enter(final int minComplete, final int flags)
    {
        return enter(minComplete, flags, 0L, 0L);
    }

    private int enter(final int minComplete, final int flags, final long arg, final long argSize)
    {
        INT.setRelease(sqRing, sqTail, tail);
        final MemorySegment capture = CallScratch.capture();
        final long result;
        try
        {
            result = (long)ENTER.invokeExact(capture, (long)SYS_IO_URING_ENTER, (long)fd, (long)pending,
                (long)minComplete, (long)flags, arg, argSize);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result < 0)
        {
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EINTR || errno == Errno.EAGAIN || errno == Errno.EBUSY || errno == Errno.ETIME)
            {
                return 0; // the caller reaps and comes back (ETIME: the wait's timeout ran out)
            }
            throw new NativeException("io_uring_enter", errno, "fd=" + fd + " to_submit=" + pending);
        }
        pending -= (int)result;
        return (int)result;
    }

    /**
     * Calls {@code handler} for every completion ready now, then frees their slots in one store.
     *
     * @return how many completions were reaped.
     */
    public int reap(final CompletionHandler handler)
    {
        final int head = (int)INT.get(cqRing, cqHead);
        final int ready = (int)INT.getAcquire(cqRing, cqTail);
        for (int i = head; i != ready; i++)
        {
            final long cqe = cqes + (long)(i & cqMask) * CQE_SIZE;
            handler.onCompletion(cqRing.get(JAVA_LONG, cqe + CQE_USER_DATA), cqRing.get(JAVA_INT, cqe + CQE_RES));
        }
        INT.setRelease(cqRing, cqHead, ready);
        return ready - head;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        MappedMemory.unmap(sqes);
        if (cqRing != sqRing)
        {
            MappedMemory.unmap(cqRing);
        }
        MappedMemory.unmap(sqRing);
        FileDescriptors.close(fd);
        waitArena.close();
    }
}
