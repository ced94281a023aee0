package io.xferd.nativebindings.libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Per-thread native scratch memory, so that calls on the data path allocate nothing: the errno capture state,
 * room for a {@code msghdr} + {@code iovec} + one-fd {@code cmsghdr} (or two iovecs for process_vm_*), and a
 * {@code struct stat}.
 * <p>
 * Layout of {@link #message()}:
 * <pre>
 *   0        56   64         80             104
 *   +--------+----+----------+--------------+
 *   | msghdr |pad | iovec[0] | cmsghdr + fd |   (iovec[1] at 80 for process_vm_*)
 *   +--------+----+----------+--------------+
 * </pre>
 * The memory belongs to an automatic arena and is freed when the thread's scratch becomes unreachable.
 */
final class CallScratch
{
    static final long MSGHDR_OFFSET = 0;
    static final long IOV_OFFSET = 64;
    static final long IOV2_OFFSET = 80;
    static final long CMSG_OFFSET = 80;
    static final long MESSAGE_SIZE = 128;

    private static final ThreadLocal<CallScratch> LOCAL = ThreadLocal.withInitial(CallScratch::new);

    private final MemorySegment capture;
    private final MemorySegment message;
    private final MemorySegment stat;
    private final MemorySegment localIov;
    private final MemorySegment remoteIov;
    private final MemorySegment timespec;

    private CallScratch()
    {
        final Arena arena = Arena.ofAuto();
        capture = arena.allocate(Libc.CAPTURE_STATE_SIZE, 8);
        message = arena.allocate(MESSAGE_SIZE, 8);
        stat = arena.allocate(FileIo.STAT_SIZE, 8);
        localIov = message.asSlice(IOV_OFFSET, 16);
        remoteIov = message.asSlice(IOV2_OFFSET, 16);
        timespec = arena.allocate(16, 8);
    }

    static CallScratch get()
    {
        return LOCAL.get();
    }

    /**
     * @return the calling thread's capture-state segment.
     */
    static MemorySegment capture()
    {
        return LOCAL.get().capture;
    }

    static int errno(final MemorySegment capture)
    {
        return capture.get(ValueLayout.JAVA_INT, Libc.ERRNO_OFFSET);
    }

    MemorySegment captureSegment()
    {
        return capture;
    }

    MemorySegment message()
    {
        return message;
    }

    /**
     * @return room for one {@code struct stat}.
     */
    MemorySegment stat()
    {
        return stat;
    }

    /**
     * @return the first iovec of {@link #message()}, made once (process_vm_*'s local iovec).
     */
    MemorySegment localIov()
    {
        return localIov;
    }

    /**
     * @return the iovec at {@link #IOV2_OFFSET} of {@link #message()} (process_vm_*'s remote iovec).
     */
    MemorySegment remoteIov()
    {
        return remoteIov;
    }

    /**
     * @return room for one {@code struct timespec}.
     */
    MemorySegment timespec()
    {
        return timespec;
    }
}
