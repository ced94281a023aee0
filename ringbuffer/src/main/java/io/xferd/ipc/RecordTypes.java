package io.xferd.ipc;

/**
 * Message type ids of the records on the shared-memory rings (the Agrona record header's type field).
 */
public final class RecordTypes
{
    /** To-daemon ring: a transfer request, body {@link SubmitRequestFlyweight}. */
    public static final int SUBMIT = 1;

    /** Completion ring: the end of one request, body {@link CompletionFlyweight}. */
    public static final int COMPLETION = 1;
    /** Completion ring: a message a remote writer attached to a WRITE, body {@link NotificationFlyweight}. */
    public static final int NOTIFICATION = 2;

    private RecordTypes()
    {
    }
}
