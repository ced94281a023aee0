package io.xferd.daemon.control;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.daemon.storage.StorageCounters;
import io.xferd.daemon.storage.StorageFile;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.FileRegistration;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.FileStatus;
import io.xferd.nativebindings.libc.IoUring;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers a byte range of a file or block device the client opened and passed (SCM_RIGHTS) as a region of its
 * segment. The daemon never opens a path a client names: what the client could open is what it can register, with
 * the access mode it opened it with. Registration checks that the descriptor is a regular file or a block device,
 * that the range lies inside it now, and that this daemon can set up an io_uring. When the range is block aligned
 * and the client did not ask for buffered I/O, it reopens the passed descriptor with O_DIRECT (a description of
 * its own: the client's keeps its flags), so the page cache is bypassed; where the file system refuses O_DIRECT
 * (tmpfs before Linux 6.6) the range is served buffered. Runs on the conductor's thread.
 */
public final class FileRegionMapper
{
    private static final Logger LOG = LoggerFactory.getLogger(FileRegionMapper.class);

    // where each region's own counters are allocated (xferd status, metrics); null: regions are not counted
    private final SystemCounters counters;
    private Boolean ioUringAvailable;

    public FileRegionMapper()
    {
        this(null);
    }

    public FileRegionMapper(final SystemCounters counters)
    {
        this.counters = counters;
    }

    /**
     * As {@link #map(int, FileRegistration)}, the region counted under {@code segment}'s name (its bytes read and
     * written and its errors, in the cnc file).
     */
    public Region map(final int fd, final FileRegistration registration, final String segment)
    {
        final Region region = map(fd, registration);
        if (counters != null && !StorageCounters.attach(counters, region.file(), segment, registration.ownerAddress()))
        {
            LOG.warn("storage region {} 0x{} not counted: the cnc file's counters are all in use", segment,
                Long.toHexString(registration.ownerAddress()));
        }
        return region;
    }

    /**
     * @param fd taken over: closed here when refused, else by the region's release.
     * @throws RegistrationRefusedException (INVALID_ARGUMENT, or MAP_FAILED without io_uring) when the range cannot be registered; the fd is closed then.
     */
    public Region map(final int fd, final FileRegistration registration)
    {
        try
        {
            return mapOrThrow(fd, registration);
        }
        catch (final RuntimeException ex)
        {
            closeQuietly(fd);
            throw ex;
        }
    }

    private Region mapOrThrow(final int fd, final FileRegistration registration)
    {
        final long address = registration.ownerAddress();
        final long length = registration.length();
        final long offset = registration.fileOffset();
        if (address <= 0 || length <= 0 || offset < 0 || address + length < address || offset + length < offset)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT, "bad range: address 0x" + Long.toHexString(address) +
                " length " + length + " file offset " + offset);
        }
        if (!ioUringAvailable())
        {
            throw new RegistrationRefusedException(ControlError.MAP_FAILED, "io_uring is not available to the daemon (kernel without it, " +
                "kernel.io_uring_disabled, or a seccomp filter): storage regions need it");
        }
        final int type;
        final long size;
        final long device;
        try
        {
            type = FileIo.mode(fd) & FileIo.S_IFMT;
            size = FileIo.size(fd);
            device = FileStatus.of(fd).device();
        }
        catch (final NativeException ex)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT, "cannot stat the passed descriptor: " + ex.getMessage());
        }
        if (type != FileIo.S_IFREG && type != FileIo.S_IFBLK)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT, "the passed descriptor is neither a regular file nor a block " +
                "device (st_mode type 0" + Integer.toOctalString(type) + ")");
        }
        if (size < 0 || offset + length > size)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT, "out of range: [" + offset + ", " + (offset + length) +
                ") does not lie inside the file's " + size + " bytes");
        }
        final boolean aligned = ((offset | length) & (StorageFile.BLOCK - 1)) == 0;
        final boolean direct = FileIo.isDirect(fd);
        if (direct && !aligned)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT, "the descriptor has O_DIRECT but the range [" + offset + "+" +
                length + ") is not 4096-byte aligned: align it, or open the file without O_DIRECT");
        }
        final String label = type == FileIo.S_IFBLK ? StorageFile.NVME : StorageFile.FILE;
        if (!direct && aligned && !registration.buffered())
        {
            final int directFd = reopenDirect(fd);
            if (directFd >= 0)
            {
                FileIo.close(fd);
                return Region.inFile(address, length,
                    new StorageFile(directFd, offset, length, true, registration.sync(), label, device));
            }
        }
        return Region.inFile(address, length,
            new StorageFile(fd, offset, length, direct, registration.sync(), label, device));
    }

    /**
     * A second open file description of the very file the client passed, with O_DIRECT and no more access than the
     * client's ({@code /proc/self/fd/N} names the passed descriptor, not a path the client chose), so that the
     * client's own descriptor keeps its flags.
     *
     * @return the new descriptor, or -1 when the file system refuses O_DIRECT (EINVAL) or the daemon may not reopen
     * the file (EACCES: the region is then served buffered through the passed descriptor).
     */
    private static int reopenDirect(final int fd)
    {
        try
        {
            return FileIo.open("/proc/self/fd/" + fd, FileIo.accessMode(fd) | FileIo.O_DIRECT, 0);
        }
        catch (final NativeException ex)
        {
            return -1;
        }
    }

    private boolean ioUringAvailable()
    {
        if (ioUringAvailable == null)
        {
            ioUringAvailable = IoUring.isAvailable();
        }
        return ioUringAvailable;
    }

    /**
     * Closes a freed file region's descriptor.
     */
    public static void unmap(final Region region)
    {
        region.file().close();
    }

    private static void closeQuietly(final int fd)
    {
        try
        {
            FileIo.close(fd);
        }
        catch (final RuntimeException ignore)
        {
            // the refusal is what the client hears about
        }
    }
}
