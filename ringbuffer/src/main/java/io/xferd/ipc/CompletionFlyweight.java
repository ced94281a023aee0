package io.xferd.ipc;

import org.agrona.MutableDirectBuffer;

/**
 * The end of one request, written by the daemon into the submitter's completion ring as record type
 * {@link RecordTypes#COMPLETION}. All fields little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                        Request Id                             |  0
 *  +---------------------------------------------------------------+
 *  |                 Status ({@link TransferStatus})               |  8
 *  +---------------------------------------------------------------+
 *  |                          Reserved                             | 12
 *  +---------------------------------------------------------------+
 *  |                     Bytes Transferred                         | 16
 *  +---------------------------------------------------------------+
 *  |         Daemon Intake Time (CLOCK_MONOTONIC ns)               | 24
 *  +---------------------------------------------------------------+
 *  |        Daemon Complete Time (CLOCK_MONOTONIC ns)              | 32
 *  +---------------------------------------------------------------+
 * </pre>
 * Bytes transferred equals the request's length when status is OK and is zero otherwise: a request is never
 * reported complete unless every byte arrived.
 */
public final class CompletionFlyweight
{
    public static final int REQUEST_ID_OFFSET = 0;
    public static final int STATUS_OFFSET = 8;
    public static final int BYTES_OFFSET = 16;
    public static final int INTAKE_NANOS_OFFSET = 24;
    public static final int COMPLETE_NANOS_OFFSET = 32;
    public static final int LENGTH = 40;

    private MutableDirectBuffer buffer;
    private int offset;

    public CompletionFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public long requestId()
    {
        return buffer.getLong(offset + REQUEST_ID_OFFSET);
    }

    public CompletionFlyweight requestId(final long value)
    {
        buffer.putLong(offset + REQUEST_ID_OFFSET, value);
        return this;
    }

    public int status()
    {
        return buffer.getInt(offset + STATUS_OFFSET);
    }

    public CompletionFlyweight status(final int value)
    {
        buffer.putInt(offset + STATUS_OFFSET, value);
        buffer.putInt(offset + STATUS_OFFSET + 4, 0);
        return this;
    }

    public long bytesTransferred()
    {
        return buffer.getLong(offset + BYTES_OFFSET);
    }

    public CompletionFlyweight bytesTransferred(final long value)
    {
        buffer.putLong(offset + BYTES_OFFSET, value);
        return this;
    }

    public long intakeNanos()
    {
        return buffer.getLong(offset + INTAKE_NANOS_OFFSET);
    }

    public CompletionFlyweight intakeNanos(final long value)
    {
        buffer.putLong(offset + INTAKE_NANOS_OFFSET, value);
        return this;
    }

    public long completeNanos()
    {
        return buffer.getLong(offset + COMPLETE_NANOS_OFFSET);
    }

    public CompletionFlyweight completeNanos(final long value)
    {
        buffer.putLong(offset + COMPLETE_NANOS_OFFSET, value);
        return this;
    }
}
