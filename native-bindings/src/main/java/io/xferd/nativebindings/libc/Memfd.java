package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
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
    static final int MFD_ALLOW_SEALING = 2;
    static final int F_ADD_SEALS = 1033;
    static final int F_GET_SEALS = 1034;

    /** No further seal may be added. */
    public static final int SEAL_SEAL = 0x1;
    /** The file may not shrink: a mapping of it can never lose pages to a truncate (no SIGBUS). */
    public static final int SEAL_SHRINK = 0x2;
    /** The file may not grow. */
    public static final int SEAL_GROW = 0x4;
    /** The file's contents may not change. */
    public static final int SEAL_WRITE = 0x8;
    /** {@link #seals(int)} of a file that cannot carry seals (not shmem: a regular file on disk, a device). */
    public static final int SEALS_UNSUPPORTED = -1;

    private static final MethodHandle MEMFD_CREATE =
        Libc.downcallCapturingErrno("memfd_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    // fcntl is variadic: F_GET_SEALS passes no variadic argument, F_ADD_SEALS one int
    private static final MethodHandle FCNTL_GET =
        Libc.downcallVariadicCapturingErrno("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), 2);
    private static final MethodHandle FCNTL_SET = Libc.downcallVariadicCapturingErrno(
        "fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), 2);
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
        return create(name, MFD_CLOEXEC);
    }

    /**
     * As {@link #create(String)}, with MFD_ALLOW_SEALING: seal it with {@link #addSeals} once it has its size.
     */
    public static int createSealable(final String name)
    {
        return create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    }

    private static int create(final String name, final int flags)
    {
        final MemorySegment capture = CallScratch.capture();
        final int fd;
        try (Arena arena = Arena.ofConfined())
        {
            fd = (int)MEMFD_CREATE.invokeExact(capture, arena.allocateFrom(name), flags);
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

    /**
     * {@code fcntl(F_ADD_SEALS)}: EPERM when the file was made without MFD_ALLOW_SEALING or already has
     * {@link #SEAL_SEAL}.
     */
    public static void addSeals(final int fd, final int seals)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)FCNTL_SET.invokeExact(capture, fd, F_ADD_SEALS, seals);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result != 0)
        {
            throw new NativeException("fcntl", CallScratch.errno(capture), "F_ADD_SEALS fd=" + fd + " seals=" + seals);
        }
    }

    /**
     * {@code fcntl(F_GET_SEALS)}.
     *
     * @return the file's seals ({@link #SEAL_SHRINK} and friends; a memfd made without MFD_ALLOW_SEALING, or a
     * tmpfs file, has {@link #SEAL_SEAL} alone), or {@link #SEALS_UNSUPPORTED} for a file that cannot have any.
     */
    public static int seals(final int fd)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)FCNTL_GET.invokeExact(capture, fd, F_GET_SEALS);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (result < 0)
        {
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EINVAL)
            {
                return SEALS_UNSUPPORTED;
            }
            throw new NativeException("fcntl", errno, "F_GET_SEALS fd=" + fd);
        }
        return result;
    }

    public static void close(final int fd)
    {
        FileDescriptors.close(fd);
    }
}
