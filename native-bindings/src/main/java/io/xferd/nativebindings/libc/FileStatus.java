package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The size and type of an open file: {@code fstat(2)}, called as {@code statx(fd, "", AT_EMPTY_PATH)} because
 * {@code struct statx} has one layout on every architecture (the offsets of {@code struct stat} differ between
 * x86_64 and aarch64).
 * <pre>
 *   0 stx_mask u32 | 4 stx_blksize u32 | 8 stx_attributes u64 | 16 stx_nlink u32 | 20 stx_uid u32 |
 *   24 stx_gid u32 | 28 stx_mode u16 | 30 pad | 32 stx_ino u64 | 40 stx_size u64 | ...
 * 128 stx_rdev_major u32 | 132 stx_rdev_minor u32 | 136 stx_dev_major u32 | 140 stx_dev_minor u32 | ... 256 in all
 * </pre>
 */
public record FileStatus(int mode, long size, long device)
{
    static final long RDEV_MAJOR_OFFSET = 128;
    static final long DEV_MAJOR_OFFSET = 136;
    static final int S_IFBLK = 0x6000;
    static final int AT_EMPTY_PATH = 0x1000;
    static final int STATX_TYPE = 0x1;
    static final int STATX_SIZE = 0x200;
    static final int STATX_LENGTH = 256;
    static final long MODE_OFFSET = 28;
    static final long SIZE_OFFSET = 40;
    static final int S_IFMT = 0xF000;
    static final int S_IFREG = 0x8000;

    private static final MethodHandle STATX = Libc.downcallCapturingErrno(
        "statx", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));

    /**
     * @throws NativeException EBADF for a closed descriptor; ENOSYS where the kernel (or a seccomp filter) has no
     *                         statx.
     */
    public static FileStatus of(final int fd)
    {
        final MemorySegment capture = CallScratch.capture();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(STATX_LENGTH, 8);
            final int result;
            try
            {
                result = (int)STATX.invokeExact(capture, fd, arena.allocateFrom(""), AT_EMPTY_PATH,
                    STATX_TYPE | STATX_SIZE, buffer);
            }
            catch (final Throwable t)
            {
                throw Libc.rethrow(t);
            }
            if (result != 0)
            {
                throw new NativeException("statx", CallScratch.errno(capture), "fd=" + fd);
            }
            final int mode = Short.toUnsignedInt(buffer.get(JAVA_SHORT, MODE_OFFSET));
            // a block device is the device itself; a file lives on the device of its file system
            final long deviceOffset = (mode & S_IFMT) == S_IFBLK ? RDEV_MAJOR_OFFSET : DEV_MAJOR_OFFSET;
            final long device = ((long)buffer.get(JAVA_INT, deviceOffset) << 32) |
                Integer.toUnsignedLong(buffer.get(JAVA_INT, deviceOffset + 4));
            return new FileStatus(mode, buffer.get(JAVA_LONG, SIZE_OFFSET), device);
        }
    }

    /**
     * The device a file's bytes live on: (major << 32 | minor) of a block device itself, or of the file system
     * holding a file. Storage requests to one device share one queue.
     */
    public long device()
    {
        return device;
    }

    /**
     * @return true for a regular file (a memfd is one too); false for devices, pipes, sockets, directories.
     */
    public boolean isRegularFile()
    {
        return (mode & S_IFMT) == S_IFREG;
    }
}
