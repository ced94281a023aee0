package io.xferd.client;

import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.libc.Futex;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;

/**
 * This client's side of the submit ring's doorbell ({@link RingsFileDescriptor#SUBMIT_DOORBELL_OFFSET}): after a
 * quiet spell the daemon's data-plane thread marks the word asleep and blocks on it; the next record this client
 * publishes wakes it with one system call, instead of waiting out its bounded sleep. While the daemon polls, ringing
 * costs a fence and a load.
 */
final class SubmitDoorbell
{
    private final AtomicBuffer trailer;
    private final int index;
    private final long address;

    /**
     * @param submitRing the submit ring, data area and trailer, over mapped memory.
     */
    SubmitDoorbell(final AtomicBuffer submitRing)
    {
        this.trailer = submitRing;
        this.index = submitRing.capacity() - RingsFileDescriptor.TRAILER_LENGTH +
            RingsFileDescriptor.SUBMIT_DOORBELL_OFFSET;
        this.address = submitRing.addressOffset() + index;
    }

    /**
     * Call after publishing a record.
     */
    void ring()
    {
        // the record's release store must be visible before the doorbell is read (the daemon, the other way round,
        // stores the doorbell before it looks at the ring once more): a store-load fence on both sides
        VarHandle.fullFence();
        if (trailer.getIntVolatile(index) != 0)
        {
            trailer.putIntVolatile(index, 0); // a daemon about to sleep on the old value returns at once
            try
            {
                Futex.wake(address, 1);
            }
            catch (final RuntimeException ex)
            {
                // the record is published: the daemon still takes it at the end of its bounded sleep, so a wake
                // that cannot be made only delays the request and must not report it failed
            }
        }
    }
}
