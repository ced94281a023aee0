package io.xferd.ipc;

import org.agrona.MutableDirectBuffer;

import static org.agrona.BitUtil.SIZE_OF_INT;

/**
 * A transfer request, written by a client into its own submit ring as record type {@link RecordTypes#SUBMIT}.
 * All fields little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Reserved (write 0)                        |  0
 *  +---------------------------------------------------------------+
 *  |                           Opcode                              |  4
 *  +---------------------------------------------------------------+
 *  |                     Reserved (write 0)                        |  8
 *  +---------------------------------------------------------------+
 *  |                        Request Id                             | 16
 *  +---------------------------------------------------------------+
 *  |                      Segment Handle                           | 24
 *  +---------------------------------------------------------------+
 *  |           Local Address (submitter's virtual address)         | 32
 *  +---------------------------------------------------------------+
 *  |      Target Address (target owner's virtual address)          | 40
 *  +---------------------------------------------------------------+
 *  |                          Length                               | 48
 *  +---------------------------------------------------------------+
 *  |                  Trace Id (0 when unset)                      | 56
 *  +---------------------------------------------------------------+
 *  |              Submit Time (CLOCK_MONOTONIC ns)                 | 64
 *  +---------------------------------------------------------------+
 *  |                       Notify Length                           | 72
 *  +---------------------------------------------------------------+
 *  |                          Reserved                             | 76
 *  +---------------------------------------------------------------+
 *  |                 Notify Message (0..256 bytes)                ...  80
 *  +---------------------------------------------------------------+
 * </pre>
 * Every field is an 8-byte aligned long except the reserved int at 0, opcode, notify length and the reserved
 * int at 76. Protocol version 1 carried a client slot at 0 and a session token at 8; in version 2 the ring a record
 * arrives on names its client, so nothing secret is written into shared memory and those bytes are ignored.
 */
public final class SubmitRequestFlyweight
{
    public static final int RESERVED_OFFSET = 0;
    public static final int OPCODE_OFFSET = 4;
    public static final int RESERVED_LONG_OFFSET = 8;
    public static final int REQUEST_ID_OFFSET = 16;
    public static final int SEGMENT_HANDLE_OFFSET = 24;
    public static final int LOCAL_ADDRESS_OFFSET = 32;
    public static final int TARGET_ADDRESS_OFFSET = 40;
    public static final int LENGTH_OFFSET = 48;
    public static final int TRACE_ID_OFFSET = 56;
    public static final int SUBMIT_NANOS_OFFSET = 64;
    public static final int NOTIFY_LENGTH_OFFSET = 72;
    public static final int NOTIFY_OFFSET = 80;

    public static final int HEADER_LENGTH = NOTIFY_OFFSET;
    public static final int MAX_NOTIFY_LENGTH = 256;
    public static final int MAX_LENGTH = HEADER_LENGTH + MAX_NOTIFY_LENGTH;

    private MutableDirectBuffer buffer;
    private int offset;

    public SubmitRequestFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Zero the reserved fields at 0 and 8.
     */
    public SubmitRequestFlyweight clearReserved()
    {
        buffer.putInt(offset + RESERVED_OFFSET, 0);
        buffer.putLong(offset + RESERVED_LONG_OFFSET, 0L);
        return this;
    }

    public int opcode()
    {
        return buffer.getInt(offset + OPCODE_OFFSET);
    }

    public SubmitRequestFlyweight opcode(final int value)
    {
        buffer.putInt(offset + OPCODE_OFFSET, value);
        return this;
    }

    public long requestId()
    {
        return buffer.getLong(offset + REQUEST_ID_OFFSET);
    }

    public SubmitRequestFlyweight requestId(final long value)
    {
        buffer.putLong(offset + REQUEST_ID_OFFSET, value);
        return this;
    }

    public long segmentHandle()
    {
        return buffer.getLong(offset + SEGMENT_HANDLE_OFFSET);
    }

    public SubmitRequestFlyweight segmentHandle(final long value)
    {
        buffer.putLong(offset + SEGMENT_HANDLE_OFFSET, value);
        return this;
    }

    public long localAddress()
    {
        return buffer.getLong(offset + LOCAL_ADDRESS_OFFSET);
    }

    public SubmitRequestFlyweight localAddress(final long value)
    {
        buffer.putLong(offset + LOCAL_ADDRESS_OFFSET, value);
        return this;
    }

    public long targetAddress()
    {
        return buffer.getLong(offset + TARGET_ADDRESS_OFFSET);
    }

    public SubmitRequestFlyweight targetAddress(final long value)
    {
        buffer.putLong(offset + TARGET_ADDRESS_OFFSET, value);
        return this;
    }

    public long length()
    {
        return buffer.getLong(offset + LENGTH_OFFSET);
    }

    public SubmitRequestFlyweight length(final long value)
    {
        buffer.putLong(offset + LENGTH_OFFSET, value);
        return this;
    }

    public long traceId()
    {
        return buffer.getLong(offset + TRACE_ID_OFFSET);
    }

    public SubmitRequestFlyweight traceId(final long value)
    {
        buffer.putLong(offset + TRACE_ID_OFFSET, value);
        return this;
    }

    public long submitNanos()
    {
        return buffer.getLong(offset + SUBMIT_NANOS_OFFSET);
    }

    public SubmitRequestFlyweight submitNanos(final long value)
    {
        buffer.putLong(offset + SUBMIT_NANOS_OFFSET, value);
        return this;
    }

    public int notifyLength()
    {
        return buffer.getInt(offset + NOTIFY_LENGTH_OFFSET);
    }

    /**
     * Copy a notify message into the record and set its length; the record must have room for it.
     */
    public SubmitRequestFlyweight putNotify(final byte[] message, final int messageOffset, final int length)
    {
        buffer.putInt(offset + NOTIFY_LENGTH_OFFSET, length);
        buffer.putInt(offset + NOTIFY_LENGTH_OFFSET + SIZE_OF_INT, 0);
        if (length > 0)
        {
            buffer.putBytes(offset + NOTIFY_OFFSET, message, messageOffset, length);
        }
        return this;
    }

    public SubmitRequestFlyweight noNotify()
    {
        buffer.putInt(offset + NOTIFY_LENGTH_OFFSET, 0);
        buffer.putInt(offset + NOTIFY_LENGTH_OFFSET + SIZE_OF_INT, 0);
        return this;
    }

    public MutableDirectBuffer buffer()
    {
        return buffer;
    }

    public int notifyOffset()
    {
        return offset + NOTIFY_OFFSET;
    }

    public static int recordLength(final int notifyLength)
    {
        return HEADER_LENGTH + notifyLength;
    }
}
