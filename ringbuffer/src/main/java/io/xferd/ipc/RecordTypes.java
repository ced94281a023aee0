package io.xferd.ipc;

/**
 * Message type ids of the records on the shared-memory rings (the Agrona record header's type field).
 * Type {@code -1} is Agrona's padding record on either ring.
 */
public final class RecordTypes
{
    /** Submit ring: one transfer request, body {@link SubmitRequestFlyweight}. */
    public static final int SUBMIT = 1;
    /** Submit ring: a batch of transfer requests with one completion, body {@link SubmitBatchFlyweight}. */
    public static final int SUBMIT_BATCH = 3;

    /** Completion ring: the end of one request (or of one batch), body {@link CompletionFlyweight}. */
    public static final int COMPLETION = 1;
    /** Completion ring: a message a remote writer attached to a WRITE, body {@link NotificationFlyweight}. */
    public static final int NOTIFICATION = 2;

    private RecordTypes()
    {
    }
}
