package io.xferd.ipc;

/**
 * Error codes of the control channel's ERROR answer ({@link ControlMessages#ERROR}).
 */
public final class ControlError
{
    public static final int PROTOCOL_VERSION_MISMATCH = 1;
    public static final int MALFORMED_MESSAGE = 2;
    public static final int MISSING_FD = 3;
    public static final int OVERLAPPING_REGION = 4;
    public static final int NOT_REGISTERED = 5;
    public static final int UNKNOWN_SEGMENT = 6;
    public static final int DUPLICATE_SEGMENT_NAME = 7;
    public static final int TOO_MANY_CLIENTS = 8;
    public static final int MAP_FAILED = 9;
    public static final int INVALID_ARGUMENT = 10;
    public static final int NOT_CONNECTED = 11;
    /** GPU memory was offered but this daemon has no usable CUDA runtime (no libcudart, driver or device). */
    public static final int CUDA_UNAVAILABLE = 12;
    /** A per-client limit is reached (registered regions, control requests waiting for an answer). */
    public static final int LIMIT_REACHED = 13;
    /** The access policy refuses this client the segment: another uid's, and not granted to its uid or gid. */
    public static final int ACCESS_DENIED = 14;
    /**
     * REGISTER_MEMORY of a memfd without F_SEAL_SHRINK: it could shrink under a copy. Create it with
     * MFD_ALLOW_SEALING and add F_SEAL_SHRINK before registering.
     */
    public static final int MEMORY_NOT_SEALED = 15;
    /** REGISTER_MEMORY of a range that reaches past the end of the file that backs it. */
    public static final int BEYOND_END_OF_FILE = 16;

    private ControlError()
    {
    }

    public static String name(final int code)
    {
        return switch (code)
        {
            case PROTOCOL_VERSION_MISMATCH -> "PROTOCOL_VERSION_MISMATCH";
            case MALFORMED_MESSAGE -> "MALFORMED_MESSAGE";
            case MISSING_FD -> "MISSING_FD";
            case OVERLAPPING_REGION -> "OVERLAPPING_REGION";
            case NOT_REGISTERED -> "NOT_REGISTERED";
            case UNKNOWN_SEGMENT -> "UNKNOWN_SEGMENT";
            case DUPLICATE_SEGMENT_NAME -> "DUPLICATE_SEGMENT_NAME";
            case TOO_MANY_CLIENTS -> "TOO_MANY_CLIENTS";
            case MAP_FAILED -> "MAP_FAILED";
            case INVALID_ARGUMENT -> "INVALID_ARGUMENT";
            case NOT_CONNECTED -> "NOT_CONNECTED";
            case CUDA_UNAVAILABLE -> "CUDA_UNAVAILABLE";
            case LIMIT_REACHED -> "LIMIT_REACHED";
            case ACCESS_DENIED -> "ACCESS_DENIED";
            case MEMORY_NOT_SEALED -> "MEMORY_NOT_SEALED";
            case BEYOND_END_OF_FILE -> "BEYOND_END_OF_FILE";
            default -> "ERROR(" + code + ")";
        };
    }
}
