package io.xferd.ipc;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

/**
 * Layout of the daemon's command-and-control file, {@code <dir>/cnc.dat}: a header with the daemon's heartbeat,
 * then the daemon's counters (Agrona {@link org.agrona.concurrent.status.CountersManager} metadata and values),
 * which {@code xferd status} reads without asking the daemon. Layout version 2 has no ring: every client has its
 * own submit and completion rings (see {@link RingsFileDescriptor}).
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |           Magic 0x44524658 ("XFRD"), written last             |  0
 *  +---------------------------------------------------------------+
 *  |                    Layout Version (2)                         |  4
 *  +---------------------------------------------------------------+
 *  |                      Reserved (0)                             |  8
 *  +---------------------------------------------------------------+
 *  |                 Counters Metadata Length                      | 12
 *  +---------------------------------------------------------------+
 *  |                  Counters Values Length                       | 16
 *  +---------------------------------------------------------------+
 *  |                          Reserved                             | 20
 *  +---------------------------------------------------------------+
 *  |                        Daemon PID                             | 24
 *  +---------------------------------------------------------------+
 *  |                  Daemon Start Time (epoch ms)                 | 32
 *  +---------------------------------------------------------------+
 *  |               Liveness Timeout (ms) for clients               | 40
 *  +---------------------------------------------------------------+
 *  |        Heartbeat (epoch ms), written at least every 100 ms    | 48
 *  +---------------------------------------------------------------+
 *  |                 Reserved up to byte 128                      ...
 *  +---------------------------------------------------------------+
 *  |                 Counters Metadata Buffer                     ... 128
 *  +---------------------------------------------------------------+
 *  |                  Counters Values Buffer                      ...
 *  +---------------------------------------------------------------+
 * </pre>
 * A client or a starting daemon that sees the heartbeat older than the liveness timeout knows the daemon is gone,
 * whatever process now holds its pid.
 */
public final class CncFileDescriptor
{
    public static final String CNC_FILE = "cnc.dat";
    public static final String SOCKET_FILE = "xferd.sock";
    public static final String LOCK_FILE = "xferd.lock";

    public static final int MAGIC = 0x44524658;
    public static final int LAYOUT_VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int COUNTERS_METADATA_LENGTH_OFFSET = 12;
    public static final int COUNTERS_VALUES_LENGTH_OFFSET = 16;
    public static final int DAEMON_PID_OFFSET = 24;
    public static final int START_TIME_OFFSET = 32;
    public static final int LIVENESS_TIMEOUT_OFFSET = 40;
    public static final int HEARTBEAT_OFFSET = 48;
    public static final int HEADER_LENGTH = 128;

    private CncFileDescriptor()
    {
    }

    public static int countersMetadataLength(final int countersValuesLength)
    {
        return countersValuesLength * (CountersReader.METADATA_LENGTH / CountersReader.COUNTER_LENGTH);
    }

    public static long fileLength(final int countersValuesLength)
    {
        return HEADER_LENGTH + countersMetadataLength(countersValuesLength) + countersValuesLength;
    }

    /**
     * Fill in the header of a freshly mapped, zeroed file; the heartbeat starts at {@code startTimeMs}; the magic
     * goes last, with release semantics, so a reader that sees it sees every other field.
     */
    public static void writeHeader(
        final AtomicBuffer cnc,
        final int countersValuesLength,
        final long pid,
        final long startTimeMs,
        final long livenessTimeoutMs)
    {
        cnc.putInt(VERSION_OFFSET, LAYOUT_VERSION);
        cnc.putInt(COUNTERS_METADATA_LENGTH_OFFSET, countersMetadataLength(countersValuesLength));
        cnc.putInt(COUNTERS_VALUES_LENGTH_OFFSET, countersValuesLength);
        cnc.putLong(DAEMON_PID_OFFSET, pid);
        cnc.putLong(START_TIME_OFFSET, startTimeMs);
        cnc.putLong(LIVENESS_TIMEOUT_OFFSET, livenessTimeoutMs);
        cnc.putLong(HEARTBEAT_OFFSET, startTimeMs);
        cnc.putIntRelease(MAGIC_OFFSET, MAGIC);
    }

    /**
     * Check that a mapped file is a complete cnc file of this layout version.
     *
     * @throws IllegalStateException naming what is wrong.
     */
    public static void checkHeader(final AtomicBuffer cnc)
    {
        if (cnc.capacity() < HEADER_LENGTH)
        {
            throw new IllegalStateException("cnc file too short: " + cnc.capacity() + " bytes");
        }
        final int magic = cnc.getIntAcquire(MAGIC_OFFSET);
        if (magic != MAGIC)
        {
            throw new IllegalStateException("cnc file not ready or not an xferd file (magic " +
                Integer.toHexString(magic) + ")");
        }
        final int version = cnc.getInt(VERSION_OFFSET);
        if (version != LAYOUT_VERSION)
        {
            throw new IllegalStateException("cnc layout version " + version + ", this library speaks " +
                LAYOUT_VERSION);
        }
        final long needed = HEADER_LENGTH + (long)cnc.getInt(COUNTERS_METADATA_LENGTH_OFFSET) +
            cnc.getInt(COUNTERS_VALUES_LENGTH_OFFSET);
        if (cnc.capacity() < needed)
        {
            throw new IllegalStateException("cnc file truncated: " + cnc.capacity() + " < " + needed);
        }
    }

    public static UnsafeBuffer countersMetadataBuffer(final AtomicBuffer cnc)
    {
        return new UnsafeBuffer(cnc, HEADER_LENGTH, cnc.getInt(COUNTERS_METADATA_LENGTH_OFFSET));
    }

    public static UnsafeBuffer countersValuesBuffer(final AtomicBuffer cnc)
    {
        final int offset = HEADER_LENGTH + cnc.getInt(COUNTERS_METADATA_LENGTH_OFFSET);
        return new UnsafeBuffer(cnc, offset, cnc.getInt(COUNTERS_VALUES_LENGTH_OFFSET));
    }

    public static long daemonPid(final AtomicBuffer cnc)
    {
        return cnc.getLong(DAEMON_PID_OFFSET);
    }

    public static long startTimeMs(final AtomicBuffer cnc)
    {
        return cnc.getLong(START_TIME_OFFSET);
    }

    public static long livenessTimeoutMs(final AtomicBuffer cnc)
    {
        return cnc.getLong(LIVENESS_TIMEOUT_OFFSET);
    }

    /**
     * The daemon's last heartbeat (epoch ms).
     */
    public static long heartbeatMs(final AtomicBuffer cnc)
    {
        return cnc.getLongVolatile(HEARTBEAT_OFFSET);
    }

    /**
     * Written by the daemon's conductor, with release semantics.
     */
    public static void heartbeatMs(final AtomicBuffer cnc, final long nowMs)
    {
        cnc.putLongRelease(HEARTBEAT_OFFSET, nowMs);
    }
}
