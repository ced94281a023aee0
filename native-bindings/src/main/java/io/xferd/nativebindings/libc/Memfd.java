package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Anonymous shared memory files: {@code memfd_create(2)} with MFD_CLOEXEC, sized with {@code ftruncate(2)}, mapped
 * with {@link MappedMemory#mapShared(int, long, long)} and handed to another process with
 * {@link UnixSocket#sendWithFd}.
 */
public final class Memfd
{
    static final int MFD_CLOEXEC = 1;

    private static final MethodHandle MEMFD_CREATE =
        Libc.downcallCapturingErrno("memfd_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle FTRUNCATE =
        Libc.downcallCapturingErrno("ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));

    private Memfd()
    {
    }

    /**
     * @param name shown in {@code /proc/PID/fd} as {@code memfd:name}; at most 249 bytes.
     * @return the new file descriptor, close-on-exec.
     */
    public static int create(final String name)
    {
        final MemorySegment capture = CallScratch.capture();
        final int fd;
        try (Arena arena = Arena.ofConfined())
        {
            fd = (int)MEMFD_CREATE.invokeExact(capture, arena.allocateFrom(name), MFD_CLOEXEC);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (fd < 0)
        {
            throw new NativeException("memfd_create", CallScratch.errno(capture), "name=" + name);
        }
        return fd;
    }

    public static void truncate(final int fd, final long size)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)FTRUNCATE.invokeExact(capture, fd, size);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result != 0)
        {
            throw new NativeException("ftruncate", CallScratch.errno(capture), "fd=" + fd + " size=" + size);
        }
    }

    public static void close(final int fd)
    {
        FileDescriptors.close(fd);
    }
}
