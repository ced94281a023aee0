package io.xferd.daemon.session;

import io.xferd.ipc.RingsFileDescriptor;
import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The daemon's end of one client's submit ring: a consumer of Agrona's one-to-one ring layout that trusts nothing
 * the client wrote. Agrona's own {@code read()} takes the record length at its word, which is right for a ring
 * between friends; here the producer may be hostile, so every length, type and the tail are checked before a
 * byte is handed on, the head is this object's own (the head field in shared memory is only ever written, never
 * read back), and consumed bytes are zeroed before the head moves, as the protocol requires.
 * <p>
 * A ring that breaks the protocol is {@link #isBroken() broken} for good, with a {@link #violation() reason}; it is
 * not read again and costs its client the connection. A record whose length is still negative (being written) or
 * which the tail does not cover yet only stalls this ring. Intake thread only; allocation-free.
 */
public final class SubmitRing
{
    /** What a handler did with a record. */
    public enum Action
    {
        /** Taken: consume it. */
        TAKEN,
        /** Not now (no room downstream): leave it at the head and stop reading this ring this cycle. */
        LEAVE,
        /** The record breaks the protocol: the ring is broken. */
        MALFORMED
    }

    /**
     * Receives one committed record; {@code buffer} is the client's ring, valid for this call only, and may change
     * under the handler (read each field once).
     */
    @FunctionalInterface
    public interface RecordHandler
    {
        Action onRecord(int type, UnsafeBuffer buffer, int bodyOffset, int bodyLength);
    }

    private final UnsafeBuffer buffer;
    private final int capacity;
    private final int mask;
    private final int tailIndex;
    private final int headIndex;
    private final int doorbellIndex;
    private long head;
    private volatile String violation;

    /**
     * @param ring the ring, data area and trailer; zero-filled by its creator.
     */
    public SubmitRing(final UnsafeBuffer ring)
    {
        this.capacity = ring.capacity() - RingsFileDescriptor.TRAILER_LENGTH;
        if (!BitUtil.isPowerOfTwo(capacity))
        {
            throw new IllegalArgumentException("ring capacity must be a power of two: " + capacity);
        }
        this.buffer = ring;
        this.mask = capacity - 1;
        this.tailIndex = capacity + RingsFileDescriptor.TAIL_OFFSET;
        this.headIndex = capacity + RingsFileDescriptor.HEAD_OFFSET;
        this.doorbellIndex = capacity + RingsFileDescriptor.SUBMIT_DOORBELL_OFFSET;
        this.head = ring.getLongVolatile(headIndex);
    }

    /**
     * Read up to {@code limit} records.
     *
     * @return records taken (padding not counted); 0 when the ring is broken (see {@link #isBroken()}).
     */
    public int read(final RecordHandler handler, final int limit)
    {
        if (violation != null)
        {
            return 0;
        }
        final long tail = buffer.getLongVolatile(tailIndex);
        if (tail < head || tail - head > capacity)
        {
            return broken("tail position " + tail + " outside [head " + head + ", head + capacity " + capacity + "]");
        }
        final long start = head;
        int taken = 0;
        while (taken < limit && head < tail)
        {
            final int index = (int)head & mask;
            final int length = buffer.getIntVolatile(index);
            if (length <= 0)
            {
                break; // not committed yet
            }
            final int toEnd = capacity - index;
            if (length < RingsFileDescriptor.RECORD_HEADER_LENGTH || length > toEnd)
            {
                return broken("record length " + length + " at index " + index + " (" + toEnd +
                    " bytes to the end of the ring)");
            }
            final int aligned = BitUtil.align(length, RingsFileDescriptor.RECORD_ALIGNMENT);
            if (head + aligned > tail)
            {
                break; // the tail does not cover it yet: only this client waits
            }
            final int type = buffer.getInt(index + 4);
            if (type == RingsFileDescriptor.PADDING_TYPE)
            {
                if (length != toEnd)
                {
                    return broken("padding record of " + length + " bytes at index " + index + ", not the " + toEnd +
                        " to the end of the ring");
                }
            }
            else
            {
                final Action action = handler.onRecord(type, buffer, index + RingsFileDescriptor.RECORD_HEADER_LENGTH,
                    length - RingsFileDescriptor.RECORD_HEADER_LENGTH);
                if (action == Action.LEAVE)
                {
                    break;
                }
                if (action == Action.MALFORMED)
                {
                    return broken("malformed record of type " + type + " and length " + length);
                }
                taken++;
            }
            buffer.setMemory(index, aligned, (byte)0);
            head += aligned;
        }
        if (head != start)
        {
            buffer.putLongRelease(headIndex, head);
        }
        return taken;
    }

    private int broken(final String reason)
    {
        violation = reason;
        return 0;
    }

    public boolean isBroken()
    {
        return violation != null;
    }

    /**
     * @return why the ring is broken, or null.
     */
    public String violation()
    {
        return violation;
    }

    /**
     * @return true when the client has committed or claimed bytes the daemon has not consumed. Any thread.
     */
    public boolean hasBacklog()
    {
        return violation == null && buffer.getLongVolatile(tailIndex) != buffer.getLongVolatile(headIndex);
    }

    public int capacity()
    {
        return capacity;
    }

    /**
     * Store the ring's doorbell word (0, or {@link RingsFileDescriptor#DOORBELL_ASLEEP}), with a full fence after it.
     */
    public void doorbell(final int value)
    {
        buffer.putIntVolatile(doorbellIndex, value);
    }

    /**
     * @return the address of the ring's doorbell word in this process, to wait on.
     */
    public long doorbellAddress()
    {
        return buffer.addressOffset() + doorbellIndex;
    }
}
