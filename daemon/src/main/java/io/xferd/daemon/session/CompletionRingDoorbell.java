package io.xferd.daemon.session;

import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.libc.Futex;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;

/**
 * The daemon's side of a client's completion-ring doorbell ({@link RingsFileDescriptor#COMPLETION_DOORBELL_OFFSET}):
 * a client whose spins and yields found nothing marks the word and sleeps on it; whoever commits a record to that
 * ring then clears it and wakes the client, as the kernel wakes a thread in {@code io_uring_enter}. While the client
 * polls, ringing costs a fence and a load per record.
 * <p>
 * The word is in memory the client writes: the daemon only loads and clears it and never waits on it, so a client
 * that keeps it armed costs the committing thread one FUTEX_WAKE per record of its own and nothing else. Any thread.
 */
final class CompletionRingDoorbell
{
    private final AtomicBuffer ring;
    private final int index;
    private final long address;

    /**
     * @param completionRing the completion ring, data area and trailer.
     */
    CompletionRingDoorbell(final AtomicBuffer completionRing)
    {
        this.ring = completionRing;
        this.index = completionRing.capacity() - RingsFileDescriptor.TRAILER_LENGTH +
            RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET;
        this.address = completionRing.addressOffset() + index;
    }

    /**
     * Call after committing a record.
     */
    void ring()
    {
        // the record's commit must be visible before the word is read (the client, the other way round, marks the
        // word before it looks at the ring once more): a store-load fence on both sides
        VarHandle.fullFence();
        if (ring.getIntVolatile(index) != 0)
        {
            ring.putIntVolatile(index, 0); // a client about to sleep on the old value returns at once
            try
            {
                // one: a client chooses how many threads sleep on its word, and each woken costs this thread a
                // wake-up (the client library sleeps one thread at a time; any others end their bounded sleep)
                Futex.wake(address, 1);
            }
            catch (final RuntimeException ex)
            {
                // the record is committed: a client that was not woken finds it at the end of its bounded sleep
            }
        }
    }
}
