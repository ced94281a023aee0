package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Shared futexes on 32-bit words in memory that several processes map ({@code futex(2)} FUTEX_WAIT, FUTEX_WAKE and
 * {@code futex_waitv(2)}, Linux 5.16+), through glibc's {@code syscall}. Shared, not private: the kernel keys a word
 * of a file mapping by its file and offset, so a waker in another process that maps the same file at another
 * address reaches the sleeper.
 * <p>
 * A {@link #waitv wait on many words} takes an array of {@value #WAITER_LENGTH}-byte entries (struct futex_waitv:
 * int64 expected value, int64 address, int32 flags, int32 reserved), filled with {@link #waiter}.
 */
public final class Futex
{
    /** Size of one struct futex_waitv. */
    public static final int WAITER_LENGTH = 24;
    /** The most words one futex_waitv takes. */
    public static final int WAITV_MAX = 128;

    // futex_waitv has the same number on x86-64 and in aarch64's unified table; futex itself does not
    private static final long SYS_FUTEX = "aarch64".equals(System.getProperty("os.arch")) ? 98 : 202;
    private static final long SYS_FUTEX_WAITV = 449;
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final int FUTEX_32 = 2;
    private static final int CLOCK_MONOTONIC = 1;
    private static final int EAGAIN = 11;
    private static final int EINTR = 4;
    private static final int EFAULT = 14;
    private static final int ETIMEDOUT = 110;

    private static final MethodHandle WAKE = Libc.downcallVariadicCapturingErrno("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT), 1);
    private static final MethodHandle WAIT = Libc.downcallVariadicCapturingErrno("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, ADDRESS), 1);
    private static final MethodHandle WAITV = Libc.downcallVariadicCapturingErrno("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), 1);

    private Futex()
    {
    }

    /**
     * Wake up to {@code count} threads of any process waiting on the word at {@code address}.
     *
     * @return how many were woken.
     */
    public static int wake(final long address, final int count)
    {
        final MemorySegment capture = CallScratch.capture();
        final long woken;
        try
        {
            woken = (long)WAKE.invokeExact(capture, SYS_FUTEX, address, FUTEX_WAKE, count);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (woken < 0)
        {
            throw new NativeException("futex(FUTEX_WAKE)", CallScratch.errno(capture), "address=" + address);
        }
        return (int)woken;
    }

    /**
     * Sleep while the 32-bit word at {@code address} holds {@code expected}, until a {@link #wake}, a signal or
     * {@code timeoutNanos} (relative, at least 1). Allocation-free (the timespec is the thread's scratch).
     *
     * @return true when woken; false when the word did not hold {@code expected} (at once then), at the timeout, on a
     * signal, or when the word's mapping went away.
     */
    public static boolean wait(final long address, final int expected, final long timeoutNanos)
    {
        final CallScratch scratch = CallScratch.get();
        final MemorySegment timespec = scratch.timespec();
        timespec.set(JAVA_LONG, 0, timeoutNanos / 1_000_000_000L);
        timespec.set(JAVA_LONG, 8, timeoutNanos % 1_000_000_000L);
        final MemorySegment capture = scratch.captureSegment();
        final long result;
        try
        {
            result = (long)WAIT.invokeExact(capture, SYS_FUTEX, address, FUTEX_WAIT, expected, timespec);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result >= 0)
        {
            return true;
        }
        final int errno = CallScratch.errno(capture);
        if (errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR || errno == EFAULT)
        {
            return false;
        }
        throw new NativeException("futex(FUTEX_WAIT)", errno, "address=" + address);
    }

    /**
     * Fill entry {@code index} of a futex_waitv array: wait while the 32-bit word at {@code address} holds
     * {@code expected}.
     */
    public static void waiter(final MemorySegment waiters, final int index, final long address, final int expected)
    {
        final long at = (long)index * WAITER_LENGTH;
        waiters.set(JAVA_LONG, at, expected & 0xFFFF_FFFFL);
        waiters.set(JAVA_LONG, at + 8, address);
        waiters.set(JAVA_INT, at + 16, FUTEX_32);
        waiters.set(JAVA_INT, at + 20, 0);
    }

    /**
     * Sleep until one of the first {@code count} words of {@code waiters} is woken, or one no longer holds its
     * expected value (at once then), or until {@code deadlineNanos} on the monotonic clock
     * ({@link System#nanoTime()}'s, on Linux), or a signal.
     *
     * @param timespec 16 bytes of scratch for the deadline (struct timespec).
     * @return the index of the word that woke it, or -1 for any other return (deadline, a changed word, a signal).
     * @throws NativeException ENOSYS on kernels before 5.16, EINVAL for a bad array.
     */
    public static int waitv(
        final MemorySegment waiters, final int count, final long deadlineNanos, final MemorySegment timespec)
    {
        timespec.set(JAVA_LONG, 0, deadlineNanos / 1_000_000_000L);
        timespec.set(JAVA_LONG, 8, deadlineNanos % 1_000_000_000L);
        final MemorySegment capture = CallScratch.capture();
        final long result;
        try
        {
            result = (long)WAITV.invokeExact(capture, SYS_FUTEX_WAITV, waiters, count, 0, timespec, CLOCK_MONOTONIC);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result >= 0)
        {
            return (int)result;
        }
        final int errno = CallScratch.errno(capture);
        // EFAULT: a word's mapping went away (a client unmapped its rings) between arming and waiting; its owner is
        // gone, which is itself a reason to look again
        if (errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR || errno == EFAULT)
        {
            return -1;
        }
        throw new NativeException("futex_waitv", errno, "count=" + count);
    }
}
