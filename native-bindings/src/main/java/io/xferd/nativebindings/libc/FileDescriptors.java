package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * close(2) and O_NONBLOCK via fcntl(2), shared by the fd-owning classes.
 */
final class FileDescriptors
{
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 0x800;

    private static final MethodHandle CLOSE =
        Libc.downcallCapturingErrno("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    // fcntl is variadic: int fcntl(int fd, int cmd, ...); F_GETFL passes no variadic argument, F_SETFL one int.
    private static final MethodHandle FCNTL_GET =
        Libc.downcallVariadicCapturingErrno("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), 2);
    private static final MethodHandle FCNTL_SET = Libc.downcallVariadicCapturingErrno(
        "fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), 2);

    private FileDescriptors()
    {
    }

    /**
     * close(2). EINTR is not retried: on Linux the descriptor is released even then.
     */
    static void close(final int fd)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)CLOSE.invokeExact(capture, fd);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result != 0)
        {
            final int errno = CallScratch.errno(capture);
            if (errno != Errno.EINTR)
            {
                throw new NativeException("close", errno, "fd=" + fd);
            }
        }
    }

    /**
     * Closes without throwing; for cleanup on an error path that already has an exception to report.
     */
    static void closeQuietly(final int fd)
    {
        try
        {
            close(fd);
        }
        catch (final RuntimeException ignore)
        {
            // the original failure is what matters
        }
    }

    static void setBlocking(final int fd, final boolean blocking)
    {
        setFlag(fd, O_NONBLOCK, !blocking);
    }

    static int statusFlags(final int fd)
    {
        final MemorySegment capture = CallScratch.capture();
        try
        {
            final int flags = (int)FCNTL_GET.invokeExact(capture, fd, F_GETFL);
            if (flags < 0)
            {
                throw new NativeException("fcntl", CallScratch.errno(capture), "F_GETFL fd=" + fd);
            }
            return flags;
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Sets or clears one file status flag (O_NONBLOCK, O_DIRECT) with fcntl(F_SETFL).
     */
    static void setFlag(final int fd, final int flag, final boolean on)
    {
        final MemorySegment capture = CallScratch.capture();
        try
        {
            final int flags = (int)FCNTL_GET.invokeExact(capture, fd, F_GETFL);
            if (flags < 0)
            {
                throw new NativeException("fcntl", CallScratch.errno(capture), "F_GETFL fd=" + fd);
            }
            final int wanted = on ? flags | flag : flags & ~flag;
            if (wanted != flags && (int)FCNTL_SET.invokeExact(capture, fd, F_SETFL, wanted) != 0)
            {
                throw new NativeException("fcntl", CallScratch.errno(capture), "F_SETFL fd=" + fd);
            }
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }
}
