package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A process file descriptor ({@code pidfd_open(2)}, Linux 5.3+): it refers to one process, not to a pid number, so
 * it cannot be fooled by the pid being reused, and it becomes readable ({@link Poller#isReadable}) when that process
 * exits. Close it with {@link #close(int)}.
 */
public final class Pidfd
{
    // the same number on x86-64 and aarch64 (and every architecture since the syscall table was unified)
    private static final long SYS_PIDFD_OPEN = 434;
    private static final MethodHandle SYSCALL = Libc.downcallVariadicCapturingErrno("syscall",
        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT), 1);

    private Pidfd()
    {
    }

    /**
     * @return a close-on-exec descriptor of process {@code pid}.
     * @throws NativeException ESRCH when there is no such process, ENOSYS on kernels before 5.3.
     */
    public static int open(final int pid)
    {
        final MemorySegment capture = CallScratch.capture();
        final long fd;
        try
        {
            fd = (long)SYSCALL.invokeExact(capture, SYS_PIDFD_OPEN, pid, 0);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (fd < 0)
        {
            throw new NativeException("pidfd_open", CallScratch.errno(capture), "pid=" + pid);
        }
        return (int)fd;
    }

    public static void close(final int fd)
    {
        FileDescriptors.close(fd);
    }
}
