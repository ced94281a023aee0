package io.xferd.ipc;

import io.xferd.nativebindings.libc.Futex;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;

/**
 * The writer's side of a ring's doorbell (ringbuffer/PROTOCOL.md 3.6 and 3.7): the reader of a ring, after a quiet
 * spell, marks a word in the ring's trailer asleep and sleeps on it (a shared futex); whoever publishes a record to
 * that ring then clears the word and wakes the reader with one system call, instead of letting it wait out its
 * bounded sleep. While the reader polls, ringing costs a fence and a load.
 * <p>
 * The word is in memory the other side writes: the writer only loads and clears it, never waits on it, and wakes
 * one thread (the other side chooses how many sleep there; each woken would be a wake-up on the writer's thread).
 * Any thread; allocation-free.
 */
public final class Doorbell
{
    private final AtomicBuffer ring;
    private final int index;
    private final long address;

    /**
     * @param ring          the ring, data area and trailer, over mapped memory.
     * @param trailerOffset the word's offset in the trailer: {@link RingsFileDescriptor#SUBMIT_DOORBELL_OFFSET} or
     *                      {@link RingsFileDescriptor#COMPLETION_DOORBELL_OFFSET}.
     */
    public Doorbell(final AtomicBuffer ring, final int trailerOffset)
    {
        this.ring = ring;
        this.index = ring.capacity() - RingsFileDescriptor.TRAILER_LENGTH + trailerOffset;
        this.address = ring.addressOffset() + index;
    }

    /**
     * Call after publishing a record.
     */
    public void ring()
    {
        // the record's store must be visible before the word is read (the reader, the other way round, marks the
        // word before it looks at the ring once more): a store-load fence on both sides
        VarHandle.fullFence();
        if (ring.getIntVolatile(index) != 0)
        {
            ring.putIntVolatile(index, 0); // a reader about to sleep on the old value returns at once
            try
            {
                Futex.wake(address, 1);
            }
            catch (final RuntimeException ex)
            {
                // the record is published: a reader that was not woken takes it at the end of its bounded sleep, so
                // a wake that cannot be made only delays it and must not fail the record
            }
        }
    }

    /**
     * @return whether the reader has marked the word asleep now.
     */
    public boolean isMarked()
    {
        return ring.getIntVolatile(index) == RingsFileDescriptor.DOORBELL_ASLEEP;
    }
}
