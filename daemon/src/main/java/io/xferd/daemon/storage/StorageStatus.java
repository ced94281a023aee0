package io.xferd.daemon.storage;

import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Errno;

/**
 * The completion status of a failed file operation, by its errno: each reason a storage request can end without its
 * bytes landing has its own code, so that a client can tell a full device from a broken one.
 */
public final class StorageStatus
{
    static final int EROFS = 30;
    static final int EFBIG = 27;
    static final int ENXIO = 6;
    static final int EDQUOT = 122;

    private StorageStatus()
    {
    }

    public static int of(final int errno)
    {
        return switch (errno)
        {
            case Errno.ENOSPC, EDQUOT -> TransferStatus.STORAGE_NO_SPACE;
            case Errno.EACCES, Errno.EPERM, Errno.EBADF, EROFS -> TransferStatus.STORAGE_PERMISSION;
            case EFBIG, ENXIO -> TransferStatus.STORAGE_OUT_OF_RANGE;
            default -> TransferStatus.STORAGE_IO_ERROR;
        };
    }
}
