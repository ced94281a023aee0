package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One-copy transfers between this process and another: {@code process_vm_readv(2)} / {@code process_vm_writev(2)}
 * with one local and one remote iovec. The kernel allows it where ptrace would be allowed (same uid and Yama's
 * ptrace_scope permitting, or CAP_SYS_PTRACE); otherwise EPERM.
 * <p>
 * No allocation per call: the two iovecs live in the thread's scratch memory. {@code local} must be a native segment
 * and must stay mapped for the duration of the call.
 */
public final class ProcessVm
{
    private static final FunctionDescriptor DESCRIPTOR =
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle READV = Libc.downcallCapturingErrno("process_vm_readv", DESCRIPTOR);
    private static final MethodHandle WRITEV = Libc.downcallCapturingErrno("process_vm_writev", DESCRIPTOR);
    private static final long IOVEC_SIZE = 16;

    private ProcessVm()
    {
    }

    /**
     * Copies {@code length} bytes at {@code remoteAddress} in process {@code pid} into the start of {@code local}.
     *
     * @return bytes read; fewer than {@code length} when the remote range is only partly mapped.
     */
    public static long read(final int pid, final long remoteAddress, final MemorySegment local, final long length)
    {
        return transfer(READV, "process_vm_readv", pid, remoteAddress, local, length);
    }

    /**
     * Copies the first {@code length} bytes of {@code local} to {@code remoteAddress} in process {@code pid}.
     *
     * @return bytes written; fewer than {@code length} when the remote range is only partly mapped.
     */
    public static long write(final int pid, final long remoteAddress, final MemorySegment local, final long length)
    {
        return transfer(WRITEV, "process_vm_writev", pid, remoteAddress, local, length);
    }

    /**
     * Copies up to {@code length} bytes at {@code remoteAddress} in process {@code pid} to {@code localAddress} of
     * this process, without throwing: the data path's variant (no allocation, a failure is a value).
     *
     * @param localAddress must be mapped and writable in this process for {@code length} bytes.
     * @return bytes read (fewer than {@code length} when the remote range ends in unmapped memory, or the kernel
     * stopped early), or {@code -errno} (EFAULT: unmapped remote memory; ESRCH: no such process; EPERM: not
     * permitted).
     */
    public static long readInto(final int pid, final long remoteAddress, final long localAddress, final long length)
    {
        return transferRaw(READV, pid, remoteAddress, localAddress, length);
    }

    /**
     * Copies up to {@code length} bytes from {@code localAddress} of this process to {@code remoteAddress} in process
     * {@code pid}, without throwing; see {@link #readInto}.
     *
     * @return bytes written, or {@code -errno}.
     */
    public static long writeFrom(final int pid, final long remoteAddress, final long localAddress, final long length)
    {
        return transferRaw(WRITEV, pid, remoteAddress, localAddress, length);
    }

    private static long transferRaw(
        final MethodHandle handle, final int pid, final long remoteAddress, final long localAddress, final long length)
    {
        if (length < 0)
        {
            throw new IllegalArgumentException("negative length " + length);
        }
        final CallScratch scratch = CallScratch.get();
        final MemorySegment capture = scratch.captureSegment();
        final MemorySegment message = scratch.message();
        message.set(JAVA_LONG, CallScratch.IOV_OFFSET, localAddress);
        message.set(JAVA_LONG, CallScratch.IOV_OFFSET + 8, length);
        message.set(JAVA_LONG, CallScratch.IOV2_OFFSET, remoteAddress);
        message.set(JAVA_LONG, CallScratch.IOV2_OFFSET + 8, length);
        final long moved;
        try
        {
            moved = (long)handle.invokeExact(capture, pid, scratch.localIov(), 1L, scratch.remoteIov(), 1L, 0L);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        return moved < 0 ? -CallScratch.errno(capture) : moved;
    }

    private static long transfer(
        final MethodHandle handle,
        final String function,
        final int pid,
        final long remoteAddress,
        final MemorySegment local,
        final long length)
    {
        if (!local.isNative())
        {
            throw new IllegalArgumentException("local must be a native segment");
        }
        if (length < 0 || length > local.byteSize())
        {
            throw new IndexOutOfBoundsException("length " + length + " not in [0, " + local.byteSize() + "]");
        }
        final CallScratch scratch = CallScratch.get();
        final MemorySegment capture = scratch.captureSegment();
        final MemorySegment message = scratch.message();
        final MemorySegment localIov = message.asSlice(CallScratch.IOV_OFFSET, IOVEC_SIZE);
        final MemorySegment remoteIov = message.asSlice(CallScratch.IOV2_OFFSET, IOVEC_SIZE);
        localIov.set(JAVA_LONG, 0, local.address());
        localIov.set(JAVA_LONG, 8, length);
        remoteIov.set(JAVA_LONG, 0, remoteAddress);
        remoteIov.set(JAVA_LONG, 8, length);
        final long moved;
        try
        {
            moved = (long)handle.invokeExact(capture, pid, localIov, 1L, remoteIov, 1L, 0L);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (moved < 0)
        {
            throw new NativeException(function, CallScratch.errno(capture),
                "pid=" + pid + " remote=0x" + Long.toHexString(remoteAddress) + " length=" + length);
        }
        return moved;
    }
}
