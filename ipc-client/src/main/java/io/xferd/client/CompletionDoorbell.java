package io.xferd.client;

import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.libc.Futex;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;

/**
 * This client's side of its completion ring's doorbell ({@link RingsFileDescriptor#COMPLETION_DOORBELL_OFFSET}): a
 * waiter marks the word, looks at the ring once more, and sleeps on the word (a shared futex) until the daemon, after
 * committing a record, clears it and wakes it, or until its bounded sleep ends (an older daemon never rings).
 */
final class CompletionDoorbell
{
    private final AtomicBuffer trailer;
    private final int index;
    private final long address;

    /**
     * @param completionRing the completion ring, data area and trailer, over mapped memory.
     */
    CompletionDoorbell(final AtomicBuffer completionRing)
    {
        this.trailer = completionRing;
        this.index = completionRing.capacity() - RingsFileDescriptor.TRAILER_LENGTH +
            RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET;
        this.address = completionRing.addressOffset() + index;
    }

    /**
     * Mark the word asleep, with a full fence after it: call before looking at the ring a last time (the daemon,
     * the other way round, commits its record before it reads the word).
     */
    void arm()
    {
        trailer.putIntVolatile(index, RingsFileDescriptor.DOORBELL_ASLEEP);
        VarHandle.fullFence();
    }

    /**
     * Sleep until the daemon rings, or {@code maxSleepNs}; at once when it already did (the word was cleared).
     */
    void sleep(final long maxSleepNs)
    {
        Futex.wait(address, RingsFileDescriptor.DOORBELL_ASLEEP, maxSleepNs);
    }

    /**
     * Clear the mark after a sleep, so that the daemon does not wake a client that is polling again.
     */
    void disarm()
    {
        trailer.putIntRelease(index, 0);
    }

    /**
     * Clear the mark and wake a thread asleep on it (the client closes: it must not wait out the sleep).
     */
    void wakeSleeper()
    {
        trailer.putIntVolatile(index, 0);
        try
        {
            Futex.wake(address, 1);
        }
        catch (final RuntimeException ex)
        {
            // the sleeper ends its bounded sleep on its own
        }
    }
}
