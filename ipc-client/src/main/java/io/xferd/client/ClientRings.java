package io.xferd.client;

import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.libc.MappedMemory;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;

import java.lang.foreign.MemorySegment;

/**
 * This client's two rings, mapped from the rings file the daemon made for it alone ({@link RingsFileDescriptor}):
 * the completion ring the daemon writes and this client reads, the submit ring this client writes and the daemon
 * reads.
 */
final class ClientRings implements AutoCloseable
{
    private final MemorySegment mapping;
    private final RingBuffer completionRing;
    private final RingBuffer submitRing;

    private ClientRings(final MemorySegment mapping, final int completionRingLength, final int submitRingLength)
    {
        this.mapping = mapping;
        final UnsafeBuffer rings = new UnsafeBuffer(mapping.address(), (int)mapping.byteSize());
        // the daemon's threads write completions, so the completion ring keeps Agrona's many-to-one protocol
        completionRing = new ManyToOneRingBuffer(RingsFileDescriptor.completionRing(rings, completionRingLength));
        // this client is the only producer of its submit ring: no CAS, Agrona's one-to-one protocol
        submitRing = new OneToOneRingBuffer(
            RingsFileDescriptor.submitRing(rings, completionRingLength, submitRingLength));
    }

    /**
     * Map the rings file; the descriptor stays the caller's to close.
     */
    static ClientRings map(final int ringsFd, final int completionRingLength, final int submitRingLength)
    {
        final long length = RingsFileDescriptor.fileLength(completionRingLength, submitRingLength);
        if (completionRingLength <= 0 || submitRingLength <= 0 || length > Integer.MAX_VALUE)
        {
            throw new XferException("daemon's WELCOME gave ring lengths " + completionRingLength + " and " +
                submitRingLength);
        }
        final MemorySegment mapping = MappedMemory.mapShared(ringsFd, 0, length);
        try
        {
            return new ClientRings(mapping, completionRingLength, submitRingLength);
        }
        catch (final RuntimeException ex)
        {
            MappedMemory.unmap(mapping);
            throw new XferException("daemon's rings file is not two rings: " + ex.getMessage(), ex);
        }
    }

    RingBuffer completionRing()
    {
        return completionRing;
    }

    RingBuffer submitRing()
    {
        return submitRing;
    }

    @Override
    public void close()
    {
        MappedMemory.unmap(mapping);
    }
}
