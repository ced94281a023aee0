package io.xferd.ipc;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A batch of transfer requests to one target segment, written by a client into its own submit ring as record type
 * {@link RecordTypes#SUBMIT_BATCH}, answered by ONE completion with the batch's request id. All fields
 * little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    Request Id (the batch's)                   |  0
 *  +---------------------------------------------------------------+
 *  |                  Opcode (0 READ, 1 WRITE)                     |  8
 *  +---------------------------------------------------------------+
 *  |                    Entry Count N (1..B)                       | 12
 *  +---------------------------------------------------------------+
 *  |                     Target Segment Handle                     | 16
 *  +---------------------------------------------------------------+
 *  |                   Trace Id (0 when unset)                     | 24
 *  +---------------------------------------------------------------+
 *  |               Submit Time (CLOCK_MONOTONIC ns)                | 32
 *  +---------------------------------------------------------------+
 *  |                  Notify Length M (WRITE only)                 | 40
 *  +---------------------------------------------------------------+
 *  |                        Reserved (0)                           | 44
 *  +---------------------------------------------------------------+
 *  |        Notify Message, M bytes, zero padded to align8(M)     ...  48
 *  +---------------------------------------------------------------+
 *  |  Entry 0: Local Address (8), Target Address (8), Length (8)   |  48 + align8(M)
 *  +---------------------------------------------------------------+
 *  |                      ... N entries of 24 bytes               ...
 *  +---------------------------------------------------------------+
 * </pre>
 * Body length = 48 + align8(M) + 24 N exactly; anything else is a malformed record.
 */
public final class SubmitBatchFlyweight
{
    public static final int REQUEST_ID_OFFSET = 0;
    public static final int OPCODE_OFFSET = 8;
    public static final int ENTRY_COUNT_OFFSET = 12;
    public static final int SEGMENT_HANDLE_OFFSET = 16;
    public static final int TRACE_ID_OFFSET = 24;
    public static final int SUBMIT_NANOS_OFFSET = 32;
    public static final int NOTIFY_LENGTH_OFFSET = 40;
    public static final int RESERVED_OFFSET = 44;
    public static final int NOTIFY_OFFSET = 48;
    public static final int HEADER_LENGTH = NOTIFY_OFFSET;

    public static final int ENTRY_LENGTH = 24;
    public static final int ENTRY_LOCAL_ADDRESS_OFFSET = 0;
    public static final int ENTRY_TARGET_ADDRESS_OFFSET = 8;
    public static final int ENTRY_LENGTH_OFFSET = 16;

    private MutableDirectBuffer buffer;
    private int offset;
    /**
     * Where {@link #entry} writes entry 0, known once {@link #header} wrote the notify length; -1 until then (entry
     * reads the length back from the record). The record is in a ring the daemon reads on another core: reading the
     * just-written length back for each entry was ~7 % of a 4 KiB batch's CPU besides the copy.
     */
    private int entriesAt = -1;

    public SubmitBatchFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.entriesAt = -1;
        return this;
    }

    /**
     * @return the record body's length for {@code entryCount} entries and a notify of {@code notifyLength} bytes.
     */
    public static int bodyLength(final int entryCount, final int notifyLength)
    {
        return HEADER_LENGTH + BitUtil.align(notifyLength, 8) + ENTRY_LENGTH * entryCount;
    }

    /**
     * @return the offset, from the body's start, of the first entry.
     */
    public static int entriesOffset(final int notifyLength)
    {
        return HEADER_LENGTH + BitUtil.align(notifyLength, 8);
    }

    public long requestId()
    {
        return buffer.getLong(offset + REQUEST_ID_OFFSET);
    }

    public int opcode()
    {
        return buffer.getInt(offset + OPCODE_OFFSET);
    }

    public int entryCount()
    {
        return buffer.getInt(offset + ENTRY_COUNT_OFFSET);
    }

    public long segmentHandle()
    {
        return buffer.getLong(offset + SEGMENT_HANDLE_OFFSET);
    }

    public long traceId()
    {
        return buffer.getLong(offset + TRACE_ID_OFFSET);
    }

    public long submitNanos()
    {
        return buffer.getLong(offset + SUBMIT_NANOS_OFFSET);
    }

    public int notifyLength()
    {
        return buffer.getInt(offset + NOTIFY_LENGTH_OFFSET);
    }

    public int notifyOffset()
    {
        return offset + NOTIFY_OFFSET;
    }

    /**
     * Write the header and the notify message (with its zero padding); entries follow with {@link #entry}.
     */
    public SubmitBatchFlyweight header(
        final long requestId,
        final int opcode,
        final int entryCount,
        final long segmentHandle,
        final long traceId,
        final long submitNanos,
        final DirectBuffer notify,
        final int notifyOffset,
        final int notifyLength)
    {
        buffer.putLong(offset + REQUEST_ID_OFFSET, requestId);
        buffer.putInt(offset + OPCODE_OFFSET, opcode);
        buffer.putInt(offset + ENTRY_COUNT_OFFSET, entryCount);
        buffer.putLong(offset + SEGMENT_HANDLE_OFFSET, segmentHandle);
        buffer.putLong(offset + TRACE_ID_OFFSET, traceId);
        buffer.putLong(offset + SUBMIT_NANOS_OFFSET, submitNanos);
        buffer.putInt(offset + NOTIFY_LENGTH_OFFSET, notifyLength);
        buffer.putInt(offset + RESERVED_OFFSET, 0);
        if (notifyLength > 0)
        {
            buffer.putBytes(offset + NOTIFY_OFFSET, notify, notifyOffset, notifyLength);
        }
        final int padded = BitUtil.align(notifyLength, 8);
        if (padded > notifyLength)
        {
            buffer.setMemory(offset + NOTIFY_OFFSET + notifyLength, padded - notifyLength, (byte)0);
        }
        entriesAt = offset + NOTIFY_OFFSET + padded;
        return this;
    }

    /**
     * Write entry {@code index}: after {@link #header} at the offset its notify length gives, without reading the
     * record back; after a bare {@link #wrap}, at the offset the record's notify length field gives.
     */
    public SubmitBatchFlyweight entry(
        final int index, final long localAddress, final long targetAddress, final long length)
    {
        final int first = entriesAt >= 0 ? entriesAt : offset + entriesOffset(notifyLength());
        final int at = first + index * ENTRY_LENGTH;
        buffer.putLong(at + ENTRY_LOCAL_ADDRESS_OFFSET, localAddress);
        buffer.putLong(at + ENTRY_TARGET_ADDRESS_OFFSET, targetAddress);
        buffer.putLong(at + ENTRY_LENGTH_OFFSET, length);
        return this;
    }

    /**
     * @return the absolute offset in the buffer of entry {@code index} of a batch whose notify is
     * {@code notifyLength} bytes (the caller passes the length it validated, not one read again).
     */
    public int entryOffset(final int notifyLength, final int index)
    {
        return offset + entriesOffset(notifyLength) + index * ENTRY_LENGTH;
    }

    public MutableDirectBuffer buffer()
    {
        return buffer;
    }
}
