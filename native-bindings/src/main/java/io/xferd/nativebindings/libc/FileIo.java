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
 * What storage regions need from a file descriptor besides io_uring: {@code open(2)} (for files the daemon's own
 * configuration names), {@code fstat(2)}'s type and size, the size (fstat for files, {@code ioctl(BLKGETSIZE64)} for
 * block devices), and switching {@code O_DIRECT} on with {@code fcntl(F_SETFL)}. x86-64 / aarch64 Linux values,
 * checked against the headers by {@code IoUringLayoutTest}.
 */
public final class FileIo
{
    public static final int O_RDONLY = 0;
    public static final int O_WRONLY = 1;
    public static final int O_RDWR = 2;
    public static final int O_ACCMODE = 3;
    public static final int O_CREAT = 0x40;
    public static final int O_CLOEXEC = 0x80000;
    public static final int O_DIRECT = 0x4000;
    public static final int S_IFMT = 0xF000;
    public static final int S_IFREG = 0x8000;
    public static final int S_IFBLK = 0x6000;
    static final long STAT_SIZE = 144;
    static final long STAT_MODE_OFFSET = 24;
    static final long STAT_SIZE_OFFSET = 48;
    static final int FALLOC_FL_KEEP_SIZE = 1;
    /** {@code statfs.f_type} of tmpfs and shmem: the file's pages are its only copy, always in memory. */
    public static final long TMPFS_MAGIC = 0x01021994L;
    // struct statfs on x86-64 and aarch64: 120 bytes, f_type (a long) first
    static final long STATFS_SIZE = 120;

    private static final MethodHandle OPEN = Libc.downcallVariadicCapturingErrno("open",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), 2);
    private static final MethodHandle FSTAT =
        Libc.downcallCapturingErrno("fstat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle FSTATFS =
        Libc.downcallCapturingErrno("fstatfs", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    // BLKGETSIZE64 = _IOR(0x12, 114, size_t): a block device's capacity in bytes
    static final long BLKGETSIZE64 = 0x80081272L;
    static final int ENOTTY = 25;
    // fallocate interrupted this often in a row gives up: on some kernels tmpfs undoes a partial allocation on a
    // signal, so a thread that profilers signal often could otherwise start over for ever
    private static final int FALLOCATE_ATTEMPTS = 4;
    private static final MethodHandle IOCTL = Libc.downcallVariadicCapturingErrno("ioctl",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), 2);

    private static final MethodHandle FALLOCATE = Libc.downcallCapturingErrno("fallocate",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));

    private static final MethodHandle DUP = Libc.downcallCapturingErrno("dup", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private FileIo()
    {
    }

    /**
     * {@code dup(2)}: another descriptor of the same open file description (what SCM_RIGHTS gives a receiver).
     */
    public static int duplicate(final int fd)
    {
        final MemorySegment capture = CallScratch.capture();
        final int copy;
        try
        {
            copy = (int)DUP.invokeExact(capture, fd);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (copy < 0)
        {
            throw new NativeException("dup", CallScratch.errno(capture), "fd=" + fd);
        }
        return copy;
    }

    /**
     * {@code open(path, flags | O_CLOEXEC, mode)}.
     *
     * @throws NativeException ENOENT, EACCES, EISDIR, EINVAL (O_DIRECT on a file system without it) and the rest.
     */
    public static int open(final String path, final int flags, final int mode)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = CallScratch.capture();
            final int fd;
            try
            {
                fd = (int)OPEN.invokeExact(capture, arena.allocateFrom(path), flags | O_CLOEXEC, mode);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (fd < 0)
            {
                throw new NativeException("open", CallScratch.errno(capture), path);
            }
            return fd;
        }
    }

    public static void close(final int fd)
    {
        FileDescriptors.close(fd);
    }

    /**
     * @return the file's type and permission bits ({@code st_mode}).
     */
    public static int mode(final int fd)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment stat = arena.allocate(STAT_SIZE, 8);
            final int errno = fstat(fd, stat);
            if (errno != 0)
            {
                throw new NativeException("fstat", errno, "fd=" + fd);
            }
            return stat.get(JAVA_INT, STAT_MODE_OFFSET);
        }
    }

    /**
     * @return the type of the file system the file lives on ({@code fstatfs(2)}'s {@code f_type}), e.g.
     * {@link #TMPFS_MAGIC}.
     */
    public static long fileSystemType(final int fd)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment statfs = arena.allocate(STATFS_SIZE, 8);
            final MemorySegment capture = CallScratch.capture();
            final int result;
            try
            {
                result = (int)FSTATFS.invokeExact(capture, fd, statfs);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (result != 0)
            {
                throw new NativeException("fstatfs", CallScratch.errno(capture), "fd=" + fd);
            }
            return statfs.get(JAVA_LONG, 0);
        }
    }

    /**
     * The size now, without allocating and without moving the file offset (the descriptor may share its open file
     * description, and so its offset, with the client that passed it): a regular file's length ({@code fstat}) or a
     * block device's capacity ({@code ioctl(BLKGETSIZE64)}).
     *
     * @return bytes, or {@code -errno} ({@code -ENOTTY} for a descriptor that is neither: no ioctl is sent to
     * whatever driver is behind a character device, socket or FIFO a client passed).
     */
    public static long size(final int fd)
    {
        final MemorySegment stat = CallScratch.get().stat();
        final int errno = fstat(fd, stat);
        if (errno != 0)
        {
            return -errno;
        }
        final int type = stat.get(JAVA_INT, STAT_MODE_OFFSET) & S_IFMT;
        if (type == S_IFREG)
        {
            return stat.get(JAVA_LONG, STAT_SIZE_OFFSET);
        }
        if (type != S_IFBLK)
        {
            return -ENOTTY;
        }
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)IOCTL.invokeExact(capture, fd, BLKGETSIZE64, stat); // the stat scratch is read: reused
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        return result < 0 ? -CallScratch.errno(capture) : stat.get(JAVA_LONG, 0);
    }

    /**
     * {@code fstat(2)} into {@code stat}, without allocating.
     *
     * @return 0, or the errno.
     */
    private static int fstat(final int fd, final MemorySegment stat)
    {
        final MemorySegment capture = CallScratch.capture();
        final int result;
        try
        {
            result = (int)FSTAT.invokeExact(capture, fd, stat);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        return result != 0 ? CallScratch.errno(capture) : 0;
    }

    /**
     * {@code fallocate(FALLOC_FL_KEEP_SIZE)}, without allocating on the heap: gives {@code [offset, offset +
     * length)} blocks (a no-op where it has them), the file's size unchanged, so that a later write there through a
     * mapping cannot fail for want of space.
     *
     * @return 0, or {@code -errno} ({@code -ENOSPC}: the file system is full; {@code -EOPNOTSUPP}).
     */
    public static int allocateKeepingSize(final int fd, final long offset, final long length)
    {
        final MemorySegment capture = CallScratch.capture();
        for (int attempt = 1; ; attempt++)
        {
            final int result;
            try
            {
                result = (int)FALLOCATE.invokeExact(capture, fd, FALLOC_FL_KEEP_SIZE, offset, length);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (result == 0)
            {
                return 0;
            }
            final int errno = CallScratch.errno(capture);
            if (errno != Errno.EINTR || attempt == FALLOCATE_ATTEMPTS) // a signal during a large allocation: again
            {
                return -errno;
            }
        }
    }

    /**
     * @return the open file description's access mode: {@link #O_RDONLY}, {@link #O_WRONLY} or {@link #O_RDWR}.
     */
    public static int accessMode(final int fd)
    {
        return statusFlags(fd) & O_ACCMODE;
    }

    public static boolean isDirect(final int fd)
    {
        return (statusFlags(fd) & O_DIRECT) != 0;
    }

    /**
     * Turns O_DIRECT on for the open file description (shared with every descriptor of it, in any process).
     *
     * @return false when the file system refuses it (EINVAL).
     */
    public static boolean trySetDirect(final int fd)
    {
        try
        {
            FileDescriptors.setFlag(fd, O_DIRECT, true);
            return true;
        }
        catch (final NativeException ex)
        {
            if (ex.errno() == Errno.EINVAL)
            {
                return false;
            }
            throw ex;
        }
    }

    private static int statusFlags(final int fd)
    {
        return FileDescriptors.statusFlags(fd);
    }
}
