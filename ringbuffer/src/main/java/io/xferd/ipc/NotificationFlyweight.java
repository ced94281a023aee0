package io.xferd.ipc;

import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * A message that a writer attached to a WRITE, delivered to the target segment's owner after the bytes landed,
 * as record type {@link RecordTypes#NOTIFICATION} on the owner's completion ring. All fields little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                 Trace Id of the WRITE (or 0)                  |  0
 *  +---------------------------------------------------------------+
 *  |                   Source Name Length                          |  8
 *  +---------------------------------------------------------------+
 *  |                     Message Length                            | 12
 *  +---------------------------------------------------------------+
 *  |        Source Segment Name (UTF-8, no terminator)            ... 16
 *  +---------------------------------------------------------------+
 *  |                 Message (opaque bytes)                       ...
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class NotificationFlyweight
{
    public static final int TRACE_ID_OFFSET = 0;
    public static final int SOURCE_NAME_LENGTH_OFFSET = 8;
    public static final int MESSAGE_LENGTH_OFFSET = 12;
    public static final int SOURCE_NAME_OFFSET = 16;
    public static final int HEADER_LENGTH = SOURCE_NAME_OFFSET;

    private MutableDirectBuffer buffer;
    private int offset;

    public NotificationFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public long traceId()
    {
        return buffer.getLong(offset + TRACE_ID_OFFSET);
    }

    public int sourceNameLength()
    {
        return buffer.getInt(offset + SOURCE_NAME_LENGTH_OFFSET);
    }

    public int messageLength()
    {
        return buffer.getInt(offset + MESSAGE_LENGTH_OFFSET);
    }

    public String sourceName()
    {
        final byte[] bytes = new byte[sourceNameLength()];
        buffer.getBytes(offset + SOURCE_NAME_OFFSET, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    public byte[] message()
    {
        final byte[] bytes = new byte[messageLength()];
        buffer.getBytes(offset + SOURCE_NAME_OFFSET + sourceNameLength(), bytes);
        return bytes;
    }

    /**
     * Write a whole notification: header, source name, then the message copied from another buffer.
     */
    public NotificationFlyweight encode(
        final long traceId,
        final byte[] sourceName,
        final org.agrona.DirectBuffer message,
        final int messageOffset,
        final int messageLength)
    {
        buffer.putLong(offset + TRACE_ID_OFFSET, traceId);
        buffer.putInt(offset + SOURCE_NAME_LENGTH_OFFSET, sourceName.length);
        buffer.putInt(offset + MESSAGE_LENGTH_OFFSET, messageLength);
        buffer.putBytes(offset + SOURCE_NAME_OFFSET, sourceName);
        buffer.putBytes(offset + SOURCE_NAME_OFFSET + sourceName.length, message, messageOffset, messageLength);
        return this;
    }

    public static int recordLength(final int sourceNameLength, final int messageLength)
    {
        return HEADER_LENGTH + sourceNameLength + messageLength;
    }
}
