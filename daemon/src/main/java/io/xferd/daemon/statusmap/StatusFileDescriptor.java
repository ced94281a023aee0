package io.xferd.daemon.statusmap;

/**
 * Layout of {@code <dir>/status.dat}: the daemon's clients, their regions and its settings as one flat snapshot,
 * republished by the conductor (off the data plane) when they change, and read by {@code xferd status} with plain
 * loads, without Chronicle or Jackson (as Aeron's AeronStat reads cnc.dat without the media driver's classes).
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                 Magic 0x46545358 ("XSTF")                     |  0
 *  +---------------------------------------------------------------+
 *  |                    Layout Version (1)                         |  4
 *  +---------------------------------------------------------------+
 *  |   Sequence: even when the body is whole, odd while written;   |  8
 *  |   SUPERSEDED when a larger file took this one's name          |
 *  +---------------------------------------------------------------+
 *  |                      Body Length                              | 16
 *  +---------------------------------------------------------------+
 *  |            Body Capacity (file length - 64)                   | 20
 *  +---------------------------------------------------------------+
 *  |                 Published At (epoch ms)                       | 24
 *  +---------------------------------------------------------------+
 *  |                 Reserved up to byte 64                       ...
 *  +---------------------------------------------------------------+
 *  |                 Body: records, back to back                  ... 64
 *  +---------------------------------------------------------------+
 * </pre>
 * A record is {@code int type, int length} (the whole record's bytes, header included), then its fields; a string
 * is {@code int length} then that many UTF-8 bytes. Records, in this order:
 * <pre>
 *   CONFIG  string key, byte kind (STRING, LONG, BOOLEAN, NULL), value (string, long, byte 0|1, nothing)
 *   FACT    as CONFIG: what the daemon found at start ("rdma": the verbs library's availability)
 *   CLIENT  int slot, int pid, int uid, int regions, long registered bytes,
 *           string connected at, string segment, string full name
 *   REGION  int slot, long owner's address, long length, string location, string storage ("" when none)
 * </pre>
 * The reader copies the body between two reads of the sequence and retries a torn copy a bounded number of
 * times; it treats every length and count as hostile (the file is only as trustworthy as the directory).
 */
public final class StatusFileDescriptor
{
    public static final String FILE = "status.dat";

    public static final int MAGIC = 0x46545358;
    public static final int LAYOUT_VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int SEQUENCE_OFFSET = 8;
    public static final int BODY_LENGTH_OFFSET = 16;
    public static final int BODY_CAPACITY_OFFSET = 20;
    public static final int PUBLISHED_AT_OFFSET = 24;
    public static final int HEADER_LENGTH = 64;

    /** The sequence of a file a larger one replaced: its readers open the file again. Odd, as while written. */
    public static final long SUPERSEDED = -1;

    public static final int RECORD_HEADER_LENGTH = 8;
    public static final int CONFIG = 1;
    public static final int CLIENT = 2;
    public static final int REGION = 3;
    public static final int FACT = 4;

    public static final byte KIND_STRING = 0;
    public static final byte KIND_LONG = 1;
    public static final byte KIND_BOOLEAN = 2;
    public static final byte KIND_NULL = 3;

    /** No string the daemon writes is longer; a longer one is malformed. */
    public static final int MAX_STRING_LENGTH = 64 * 1024;
    /** The largest body a reader accepts. */
    public static final int MAX_BODY_LENGTH = 256 * 1024 * 1024;
    public static final int MIN_BODY_CAPACITY = 64 * 1024;

    private StatusFileDescriptor()
    {
    }
}
