package io.xferd.daemon.transport.tcp;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The slices one {@link PeerConnection} has sent and not yet had answered, found by the id their answer carries, so
 * that a peer may answer in any order (a file READ done early need not wait behind a slow one). The id on the wire
 * is the slice's sequence number on this connection, and its slot in the table that number modulo the capacity: an
 * answer finds its slice without a search and without allocating, and an id that is in flight on no slot (unknown,
 * already answered, or a sequence the slot has moved past) finds nothing.
 * <p>
 * The sender adds, in sequence; any thread takes (the receiver, one answer at a time, or whoever fails what a
 * broken connection left), each slice exactly once. A slot is reused only once its slice was taken: a slice that
 * stays unanswered while {@code capacity - 1} younger ones are answered holds the sender back (see
 * {@link #hasRoom()}) until it is answered or the connection times out on it ({@link #oldestSentNanos()}).
 */
final class InFlightSlices
{
    /** What {@link #oldestSentNanos()} returns when nothing is in flight (a clock may read 0). */
    static final long NONE_IN_FLIGHT = Long.MIN_VALUE;

    private final AtomicReferenceArray<Slice> slots;
    private final int mask;
    private final AtomicInteger size = new AtomicInteger();
    // the next sequence to send (written by the sender only; read by the receiver to bound its walk)
    private volatile long nextSequence = 1;
    // the oldest sequence that may still be in flight (the receiver's; a lower bound, never past an unanswered one)
    private long oldest = 1;

    /**
     * @param capacity a power of two, at least twice the most slices the window lets be in flight.
     */
    InFlightSlices(final int capacity)
    {
        if (Integer.bitCount(capacity) != 1)
        {
            throw new IllegalArgumentException("capacity " + capacity + " is not a power of two");
        }
        this.slots = new AtomicReferenceArray<>(capacity);
        this.mask = capacity - 1;
    }

    /**
     * @return true when the next slice's slot is free (the sender's question before it sends).
     */
    boolean hasRoom()
    {
        return slots.get((int)(nextSequence & mask)) == null;
    }

    /**
     * Put a slice in flight under the next sequence number, which it carries as its wire id from now on (sender
     * only, after {@link #hasRoom()}).
     *
     * @return its wire id.
     */
    long add(final Slice slice)
    {
        final long sequence = nextSequence;
        final int slot = (int)(sequence & mask);
        if (slots.get(slot) != null)
        {
            throw new IllegalStateException("slot of sequence " + sequence + " still in flight");
        }
        slice.inFlightId = sequence;
        size.incrementAndGet();
        slots.set(slot, slice);
        nextSequence = sequence + 1;
        return sequence;
    }

    /**
     * Take the slice that the answer with {@code wireId} answers.
     *
     * @return the slice, or null when no slice is in flight under that id (unknown, answered already, or taken by
     * whoever failed the connection's slices).
     */
    Slice take(final long wireId)
    {
        if (wireId <= 0 || wireId >= nextSequence)
        {
            return null;
        }
        final int slot = (int)(wireId & mask);
        final Slice slice = slots.get(slot);
        if (slice == null || slice.inFlightId != wireId || !slots.compareAndSet(slot, slice, null))
        {
            return null;
        }
        size.decrementAndGet();
        return slice;
    }

    /**
     * Take any slice in flight (to fail it: the connection broke), each once whoever else takes at the same time.
     *
     * @return a slice, or null when none is in flight.
     */
    Slice takeAny()
    {
        if (size.get() == 0)
        {
            return null;
        }
        for (int slot = 0; slot <= mask; slot++)
        {
            final Slice slice = slots.get(slot);
            if (slice != null && slots.compareAndSet(slot, slice, null))
            {
                size.decrementAndGet();
                return slice;
            }
        }
        return null;
    }

    /**
     * The receiver, after an answer: when was the oldest slice still in flight sent (its answer is what the peer
     * owes longest), walking past those answered since (each sequence once over the connection's life).
     *
     * @return its {@link Slice#sentNanos}, or {@link #NONE_IN_FLIGHT}.
     */
    long oldestSentNanos()
    {
        final long end = nextSequence;
        while (oldest < end)
        {
            final Slice slice = slots.get((int)(oldest & mask));
            if (slice != null && slice.inFlightId == oldest)
            {
                return slice.sentNanos;
            }
            oldest++;
        }
        return NONE_IN_FLIGHT;
    }

    /**
     * The receiver, before it takes an answer's slice.
     *
     * @return true when {@code wireId} is the oldest sequence in flight (its answer is the one the connection's
     * timeout waits for).
     */
    boolean isOldest(final long wireId)
    {
        oldestSentNanos();
        return wireId == oldest;
    }

    int size()
    {
        return size.get();
    }

    boolean isEmpty()
    {
        return size.get() == 0;
    }
}
