package io.xferd.client;

import io.xferd.ipc.TransferStatus;

/**
 * Where one task of a batch stands, as Mooncake's {@code getTransferStatus} reports it.
 *
 * @param state            {@link #WAITING}, {@link #PENDING}, {@link #COMPLETED} or {@link #FAILED}.
 * @param status           {@link TransferStatus} code when finished.
 * @param transferredBytes the request's length when COMPLETED, else 0.
 */
public record TaskStatus(int state, int status, long transferredBytes)
{
    /** Not submitted. */
    public static final int WAITING = 0;
    /** Submitted, not finished. */
    public static final int PENDING = 1;
    /** Every byte arrived. */
    public static final int COMPLETED = 2;
    /** Ended without moving the bytes; see {@link #status()}. */
    public static final int FAILED = 3;

    public boolean isDone()
    {
        return state == COMPLETED || state == FAILED;
    }

    public static String stateName(final int state)
    {
        return switch (state)
        {
            case WAITING -> "WAITING";
            case PENDING -> "PENDING";
            case COMPLETED -> "COMPLETED";
            case FAILED -> "FAILED";
            default -> "UNKNOWN(" + state + ")";
        };
    }

    @Override
    public String toString()
    {
        return stateName(state) + (state == FAILED ? " " + TransferStatus.name(status) : "") +
            " " + transferredBytes + " bytes";
    }
}
