package io.xferd.ipc;

import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Layout of a client's rings file, the memfd the daemon passes with WELCOME: the client's completion ring
 * (daemon to client, Agrona many-to-one layout, C bytes with its trailer) at offset 0, then the client's submit ring
 * (client to daemon, Agrona one-to-one layout, S bytes with its trailer) at offset C.
 * <pre>
 *  +---------------------------------------------------------------+
 *  |   Completion ring data, C - 768 bytes (a power of two)        ...  0
 *  +---------------------------------------------------------------+
 *  |   Completion ring trailer, 768 bytes                          ...  C - 768
 *  +---------------------------------------------------------------+
 *  |   Submit ring data, S - 768 bytes (a power of two)            ...  C
 *  +---------------------------------------------------------------+
 *  |   Submit ring trailer, 768 bytes                              ...  C + S - 768
 *  +---------------------------------------------------------------+
 * </pre>
 * A ring's trailer holds five int64 fields, each alone on its own 128-byte line; from the trailer's start:
 * tail (producer position) at {@value #TAIL_OFFSET}, head cache at {@value #HEAD_CACHE_OFFSET}, head (consumer
 * position) at {@value #HEAD_OFFSET}, correlation counter at {@value #CORRELATION_COUNTER_OFFSET}, consumer heartbeat
 * at {@value #CONSUMER_HEARTBEAT_OFFSET}. These are Agrona's {@link RingBufferDescriptor} offsets, restated here as
 * protocol constants (a test pins them to Agrona's).
 */
public final class RingsFileDescriptor
{
    public static final int TRAILER_LENGTH = 768;
    public static final int TAIL_OFFSET = 128;
    public static final int HEAD_CACHE_OFFSET = 256;
    public static final int HEAD_OFFSET = 384;
    public static final int CORRELATION_COUNTER_OFFSET = 512;
    public static final int CONSUMER_HEARTBEAT_OFFSET = 640;
    /**
     * The submit ring's doorbell, an int32 in its trailer (the low half of Agrona's consumer heartbeat line, which
     * xferd never used): the daemon stores {@value #DOORBELL_ASLEEP} before its data-plane thread sleeps on it (a
     * shared futex); a client that finds it so after publishing stores 0 and wakes the word (FUTEX_WAKE).
     */
    public static final int SUBMIT_DOORBELL_OFFSET = CONSUMER_HEARTBEAT_OFFSET;
    /**
     * The completion ring's doorbell, the same int32 of the completion ring's trailer: a client about to sleep on it
     * (a shared futex) stores {@value #DOORBELL_ASLEEP}; the daemon, after committing a record to that ring, finds it
     * so, stores 0 and wakes the word (FUTEX_WAKE). Added within version 2: an older client never arms it, an older
     * daemon never rings it (so a client bounds its sleep).
     */
    public static final int COMPLETION_DOORBELL_OFFSET = CONSUMER_HEARTBEAT_OFFSET;
    /** A doorbell's value while its reader may sleep on it; 0 otherwise. */
    public static final int DOORBELL_ASLEEP = 1;

    /** Record header: int32 length (header included, before padding), int32 type. */
    public static final int RECORD_HEADER_LENGTH = 8;
    /** Records start at multiples of this. */
    public static final int RECORD_ALIGNMENT = 8;
    /** The type of the record that fills the end of the data area when the next record does not fit there. */
    public static final int PADDING_TYPE = -1;

    private RingsFileDescriptor()
    {
    }

    /**
     * @return a ring's length with its trailer, for a data capacity that is a power of two.
     */
    public static int ringLength(final int capacity)
    {
        if (!BitUtil.isPowerOfTwo(capacity))
        {
            throw new IllegalArgumentException("ring capacity must be a power of two: " + capacity);
        }
        return capacity + TRAILER_LENGTH;
    }

    public static long fileLength(final int completionRingLength, final int submitRingLength)
    {
        return (long)completionRingLength + submitRingLength;
    }

    /**
     * @param rings the whole rings file mapped.
     */
    public static UnsafeBuffer completionRing(final UnsafeBuffer rings, final int completionRingLength)
    {
        return new UnsafeBuffer(rings, 0, completionRingLength);
    }

    /**
     * @param rings the whole rings file mapped.
     */
    public static UnsafeBuffer submitRing(
        final UnsafeBuffer rings, final int completionRingLength, final int submitRingLength)
    {
        return new UnsafeBuffer(rings, completionRingLength, submitRingLength);
    }
}
