package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The calling process's id, and whether another process exists ({@code kill(pid, 0)}), for a daemon that watches
 * its clients. Note the name shadows {@link java.lang.Process} where both are imported.
 */
public final class Process
{
    private static final MethodHandle GETPID = Libc.downcall("getpid", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle KILL =
        Libc.downcallCapturingErrno("kill", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));

    private Process()
    {
    }

    public static int pid()
    {
        try
        {
            return (int)GETPID.invokeExact();
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * @return true when a process with this pid exists (including one we may not signal, EPERM), false on ESRCH.
     * A zombie counts as alive until reaped; pids can be reused.
     */
    public static boolean isAlive(final int pid)
    {
        if (pid <= 0)
        {
            throw new IllegalArgumentException("pid must be positive: " + pid);
        }
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)KILL.invokeExact(capture, pid, 0);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result == 0)
        {
            return true;
        }
        final int errno = CallScratch.errno(capture);
        if (errno == Errno.EPERM)
        {
            return true;
        }
        if (errno == Errno.ESRCH)
        {
            return false;
        }
        throw new NativeException("kill", errno, "pid=" + pid);
    }
}
