package io.xferd.ipc;

/**
 * Status codes carried by a completion record ({@link CompletionFlyweight#status()}).
 * <p>
 * Zero is success; every other value names one reason a request ended without all of its bytes moved.
 * Codes are stable protocol values: append new ones, never renumber.
 */
public final class TransferStatus
{
    /** Every byte arrived. */
    public static final int OK = 0;
    /** The target segment handle names no open segment (never opened, closed, or its owner died). */
    public static final int UNKNOWN_SEGMENT = 1;
    /** The local range is not inside memory the submitter registered. */
    public static final int LOCAL_RANGE_NOT_REGISTERED = 2;
    /** The target range is not inside memory the target registered. */
    public static final int TARGET_RANGE_NOT_REGISTERED = 3;
    /** Length zero, negative, or above the daemon's maximum request length. */
    public static final int INVALID_LENGTH = 4;
    /** Opcode is neither READ nor WRITE. */
    public static final int INVALID_OPCODE = 5;
    /** The target's owner went away while the request was in flight. */
    public static final int TARGET_GONE = 6;
    /** The daemon is shutting down and did not start this request. */
    public static final int SHUTTING_DOWN = 7;
    /** Notification message longer than {@link SubmitRequestFlyweight#MAX_NOTIFY_LENGTH}. */
    public static final int INVALID_NOTIFY = 8;
    /** A transport failed to move the bytes (network error, peer lost). */
    public static final int TRANSPORT_ERROR = 9;
    /** The request did not finish within the transfer timeout. */
    public static final int TIMEOUT = 10;
    /** The daemon went away; raised by the client library, never written by a daemon. */
    public static final int DAEMON_GONE = 11;
    /**
     * The path the request needs cannot reach that kind of memory: GPU memory between daemons over RDMA needs
     * GPUDirect, which this build does not have (TCP stages it through pinned host memory).
     */
    public static final int UNSUPPORTED_MEMORY = 12;
    /**
     * A client's process memory (registered by address, reached with process_vm_readv/writev) could not be read or
     * written: the client unmapped it, or its process is gone.
     */
    public static final int MEMORY_FAULT = 13;
    /**
     * The access policy refuses the submitter the target segment (another uid's, not granted). Checked on every
     * request, so a handle learnt any other way than OPEN_SEGMENT reaches nothing.
     */
    public static final int ACCESS_DENIED = 14;
    /** A storage region's device or file system is full (ENOSPC, EDQUOT): the WRITE did not land. */
    public static final int STORAGE_NO_SPACE = 15;
    /** The storage device failed the I/O (EIO and any other error the kernel gave): the bytes did not move. */
    public static final int STORAGE_IO_ERROR = 16;
    /**
     * The file behind a storage region is now shorter than the region (truncated under it): nothing is read past its
     * end or written to regrow it.
     */
    public static final int STORAGE_TRUNCATED = 17;
    /**
     * The descriptor behind a storage region does not permit the operation (a WRITE to a file the client opened
     * read-only, a read-only file system: EBADF, EACCES, EPERM, EROFS).
     */
    public static final int STORAGE_PERMISSION = 18;
    /** The device refused the offset (EFBIG, ENXIO: past the end of a block device or the file system's limit). */
    public static final int STORAGE_OUT_OF_RANGE = 19;

    private TransferStatus()
    {
    }

    public static String name(final int status)
    {
        return switch (status)
        {
            case OK -> "OK";
            case UNKNOWN_SEGMENT -> "UNKNOWN_SEGMENT";
            case LOCAL_RANGE_NOT_REGISTERED -> "LOCAL_RANGE_NOT_REGISTERED";
            case TARGET_RANGE_NOT_REGISTERED -> "TARGET_RANGE_NOT_REGISTERED";
            case INVALID_LENGTH -> "INVALID_LENGTH";
            case INVALID_OPCODE -> "INVALID_OPCODE";
            case TARGET_GONE -> "TARGET_GONE";
            case SHUTTING_DOWN -> "SHUTTING_DOWN";
            case INVALID_NOTIFY -> "INVALID_NOTIFY";
            case TRANSPORT_ERROR -> "TRANSPORT_ERROR";
            case TIMEOUT -> "TIMEOUT";
            case DAEMON_GONE -> "DAEMON_GONE";
            case UNSUPPORTED_MEMORY -> "UNSUPPORTED_MEMORY";
            case MEMORY_FAULT -> "MEMORY_FAULT";
            case ACCESS_DENIED -> "ACCESS_DENIED";
            case STORAGE_NO_SPACE -> "STORAGE_NO_SPACE";
            case STORAGE_IO_ERROR -> "STORAGE_IO_ERROR";
            case STORAGE_TRUNCATED -> "STORAGE_TRUNCATED";
            case STORAGE_PERMISSION -> "STORAGE_PERMISSION";
            case STORAGE_OUT_OF_RANGE -> "STORAGE_OUT_OF_RANGE";
            default -> "UNKNOWN_STATUS(" + status + ")";
        };
    }
}
