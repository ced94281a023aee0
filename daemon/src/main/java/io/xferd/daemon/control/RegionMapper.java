package io.xferd.daemon.control;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.ipc.ControlError;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Maps the memory a client shared (a memfd or file descriptor and an offset in it) into the daemon, so that
 * transfers copy straight between two clients' pages. mmap offsets must be page aligned; the region's view
 * starts wherever the client's range starts inside the mapping.
 * <p>
 * A file that shrinks under a mapping turns every access beyond its new end into SIGBUS, in the middle of some
 * other client's copy. So before mapping: a memfd must be sealed against shrinking (F_SEAL_SHRINK, which its
 * owner adds and can never take back), and the range must lie inside the file. Files that cannot carry seals
 * (tmpfs and hugetlbfs files, files on disk) pass with the size check alone: a later truncate of one of them is
 * contained by the transfer worker (the faulting copy fails, its owner is cut off).
 */
final class RegionMapper
{
    static final long PAGE_SIZE = MappedMemory.PAGE_SIZE;

    private RegionMapper()
    {
    }

    /**
     * Map and take ownership of {@code fd} (closed here whatever happens; the mapping keeps the memory).
     *
     * @throws RegistrationRefusedException when the file may shrink or is too short ({@link #checkBacking}).
     * @throws NativeException              when mmap fails.
     */
    static Region map(
        final int fd, final long fdOffset, final long ownerAddress, final long length, final String location)
    {
        try
        {
            checkBacking(fd, fdOffset, length);
            final long alignedOffset = fdOffset & ~(PAGE_SIZE - 1);
            final long lead = fdOffset - alignedOffset;
            final MemorySegment whole = MappedMemory.mapSharedPopulated(fd, alignedOffset, lead + length);
            return new Region(ownerAddress, length, location, whole.asSlice(lead, length), whole);
        }
        finally
        {
            Memfd.close(fd);
        }
    }

    /**
     * @throws RegistrationRefusedException INVALID_ARGUMENT for a descriptor that is not a regular file,
     *                                      MEMORY_NOT_SEALED for a memfd without F_SEAL_SHRINK, BEYOND_END_OF_FILE
     *                                      for a range that reaches past the end of the file.
     */
    static void checkBacking(final int fd, final long fdOffset, final long length)
    {
        final FileStatus status = FileStatus.of(fd);
        if (!status.isRegularFile())
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT,
                "the descriptor is not a regular file (mode 0" + Integer.toOctalString(status.mode()) + ")");
        }
        final int seals = Memfd.seals(fd);
        if (seals != Memfd.SEALS_UNSUPPORTED && (seals & Memfd.SEAL_SHRINK) == 0 &&
            ((seals & Memfd.SEAL_SEAL) == 0 || isMemfd(fd)))
        {
            throw new RegistrationRefusedException(ControlError.MEMORY_NOT_SEALED, "the memfd is not sealed " +
                "against shrinking: create it with MFD_ALLOW_SEALING and add F_SEAL_SHRINK before registering");
        }
        final long end = fdOffset + length;
        if (end < fdOffset || end > status.size())
        {
            throw new RegistrationRefusedException(ControlError.BEYOND_END_OF_FILE, "range [" + fdOffset + ", " +
                (end < fdOffset ? "overflow" : Long.toString(end)) + ") of the file reaches past its end (" +
                status.size() + " bytes)");
        }
    }

    /**
     * A memfd made without MFD_ALLOW_SEALING looks like a tmpfs file by its seals (F_SEAL_SEAL alone); its name
     * tells them apart. Its owner could have made it sealable, so it is refused where a tmpfs file is not.
     */
    private static boolean isMemfd(final int fd)
    {
        try
        {
            return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString().startsWith("/memfd:");
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    static void unmap(final Region region)
    {
        MappedMemory.unmap(region.wholeMapping());
    }
}
