package io.xferd.daemon.journal;

/**
 * The fixed-size journal records, the same bytes in the in-process ring (record type = the ring's message type)
 * and in the Chronicle Queue, where each document is {@code int type, int64 epochOffsetNanos, body}; the
 * offset turns the body's CLOCK_MONOTONIC timestamps into epoch time ({@code epoch = monotonic + offset}).
 * All integers little-endian; timestamps CLOCK_MONOTONIC ns (the client's submit time included: same host).
 * <pre>
 * SUBMITTED (1), 48 bytes        COMPLETED (2), 80 bytes           SLICE (3), 64 bytes        SLICED (4), 32 bytes
 *  0 int64 request id             0 int64 request id                0 int64 request id         0 int64 request id
 *  8 int64 trace id               8 int64 trace id                  8 int64 trace id           8 int64 trace id
 * 16 int64 length                16 int64 length                   16 int64 slice length      16 int64 sliced ns
 * 24 int64 client submit ns      24 int64 bytes moved              24 int64 sent ns           24 int32 client slot
 * 32 int64 daemon intake ns      32 int64 client submit ns         32 int64 ack ns            28 int32 slice count
 * 40 int32 client slot           40 int64 daemon intake ns         40 int32 client slot
 * 44 int32 opcode                48 int64 daemon complete ns       44 int32 slice index
 *                                56 int32 client slot              48 int32 peer id
 *                                60 int32 opcode                   52 int32 nic id
 *                                64 int32 status                   56 int32 status
 *                                68 int32 peer id                  60 int32 reserved
 *                                72 int32 nic id
 *                                76 int32 reserved
 * </pre>
 * NAME (100, queue only): {@code int32 id} then the name as Chronicle's stop-bit UTF-8; every name in use is
 * written again at the start of each roll cycle, so a cycle file read alone still names its peers and NICs.
 */
public final class JournalRecordDescriptor
{
    public static final int SUBMITTED = 1;
    public static final int COMPLETED = 2;
    public static final int SLICE = 3;
    public static final int SLICED = 4;
    public static final int NAME = 100;

    public static final int REQUEST_ID = 0;
    public static final int TRACE_ID = 8;

    public static final int SUBMITTED_LENGTH_FIELD = 16;
    public static final int SUBMITTED_SUBMIT_NS = 24;
    public static final int SUBMITTED_INTAKE_NS = 32;
    public static final int SUBMITTED_SLOT = 40;
    public static final int SUBMITTED_OPCODE = 44;
    public static final int SUBMITTED_RECORD_LENGTH = 48;

    public static final int COMPLETED_LENGTH_FIELD = 16;
    public static final int COMPLETED_BYTES = 24;
    public static final int COMPLETED_SUBMIT_NS = 32;
    public static final int COMPLETED_INTAKE_NS = 40;
    public static final int COMPLETED_COMPLETE_NS = 48;
    public static final int COMPLETED_SLOT = 56;
    public static final int COMPLETED_OPCODE = 60;
    public static final int COMPLETED_STATUS = 64;
    public static final int COMPLETED_PEER = 68;
    public static final int COMPLETED_NIC = 72;
    public static final int COMPLETED_RECORD_LENGTH = 80;

    public static final int SLICE_LENGTH_FIELD = 16;
    public static final int SLICE_SENT_NS = 24;
    public static final int SLICE_ACK_NS = 32;
    public static final int SLICE_SLOT = 40;
    public static final int SLICE_INDEX = 44;
    public static final int SLICE_PEER = 48;
    public static final int SLICE_NIC = 52;
    public static final int SLICE_STATUS = 56;
    public static final int SLICE_RECORD_LENGTH = 64;

    public static final int SLICED_NS = 16;
    public static final int SLICED_SLOT = 24;
    public static final int SLICED_COUNT = 28;
    public static final int SLICED_RECORD_LENGTH = 32;

    public static final int MAX_RECORD_LENGTH = COMPLETED_RECORD_LENGTH;

    private JournalRecordDescriptor()
    {
    }

    /**
     * @return the body length of a record type, or -1 for a type that has no fixed length.
     */
    public static int recordLength(final int type)
    {
        return switch (type)
        {
            case SUBMITTED -> SUBMITTED_RECORD_LENGTH;
            case COMPLETED -> COMPLETED_RECORD_LENGTH;
            case SLICE -> SLICE_RECORD_LENGTH;
            case SLICED -> SLICED_RECORD_LENGTH;
            default -> -1;
        };
    }
}
