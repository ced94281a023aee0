package io.xferd.daemon.journal;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.AtomicCounter;

import java.nio.ByteBuffer;

import static io.xferd.daemon.journal.JournalRecordDescriptor.*;

/**
 * The recording side of the journal: each event becomes one fixed-size record claimed in an in-process Agrona
 * {@link ManyToOneRingBuffer} (tryClaim: no lock, no allocation); when the ring is full the event is dropped and
 * counted, the data plane never waits. {@link JournalAgent} drains the ring.
 */
public final class JournalRecorder implements TransferJournal
{
    private final ManyToOneRingBuffer ring;
    private final AtomicCounter dropped;
    private final JournalNames names;
    private final JournalDoorbell doorbell;

    public JournalRecorder(final int ringCapacity, final AtomicCounter dropped, final JournalNames names)
    {
        this.ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(ringCapacity + RingBufferDescriptor.TRAILER_LENGTH)));
        this.dropped = dropped;
        this.names = names;
        this.doorbell = new JournalDoorbell(ring);
    }

    /**
     * @return what the journal's thread sleeps on when nothing is recorded.
     */
    JournalDoorbell doorbell()
    {
        return doorbell;
    }

    ManyToOneRingBuffer ring()
    {
        return ring;
    }

    /**
     * @return records dropped so far because the ring was full.
     */
    long droppedRecords()
    {
        return dropped.get();
    }

    public JournalNames names()
    {
        return names;
    }

    @Override
    public void onSubmitted(
        final int clientSlot,
        final long requestId,
        final long traceId,
        final int opcode,
        final long length,
        final long submitNanos,
        final long intakeNanos)
    {
        final int index = ring.tryClaim(SUBMITTED, SUBMITTED_RECORD_LENGTH);
        if (index < 0)
        {
            dropped.increment();
            doorbell.ringIfAsleep();
            return;
        }
        final AtomicBuffer buffer = ring.buffer();
        buffer.putLong(index + REQUEST_ID, requestId);
        buffer.putLong(index + TRACE_ID, traceId);
        buffer.putLong(index + SUBMITTED_LENGTH_FIELD, length);
        buffer.putLong(index + SUBMITTED_SUBMIT_NS, submitNanos);
        buffer.putLong(index + SUBMITTED_INTAKE_NS, intakeNanos);
        buffer.putInt(index + SUBMITTED_SLOT, clientSlot);
        buffer.putInt(index + SUBMITTED_OPCODE, opcode);
        ring.commit(index);
        doorbell.ringIfAsleep();
    }

    @Override
    public void onSliced(
        final int clientSlot, final long requestId, final long traceId, final int sliceCount, final long slicedNanos)
    {
        final int index = ring.tryClaim(SLICED, SLICED_RECORD_LENGTH);
        if (index < 0)
        {
            dropped.increment();
            doorbell.ringIfAsleep();
            return;
        }
        final AtomicBuffer buffer = ring.buffer();
        buffer.putLong(index + REQUEST_ID, requestId);
        buffer.putLong(index + TRACE_ID, traceId);
        buffer.putLong(index + SLICED_NS, slicedNanos);
        buffer.putInt(index + SLICED_SLOT, clientSlot);
        buffer.putInt(index + SLICED_COUNT, sliceCount);
        ring.commit(index);
        doorbell.ringIfAsleep();
    }

    @Override
    public void onSlice(
        final int clientSlot,
        final long requestId,
        final long traceId,
        final int sliceIndex,
        final int peerId,
        final int nicId,
        final long length,
        final long sentNanos,
        final long ackNanos,
        final int status)
    {
        final int index = ring.tryClaim(SLICE, SLICE_RECORD_LENGTH);
        if (index < 0)
        {
            dropped.increment();
            doorbell.ringIfAsleep();
            return;
        }
        final AtomicBuffer buffer = ring.buffer();
        buffer.putLong(index + REQUEST_ID, requestId);
        buffer.putLong(index + TRACE_ID, traceId);
        buffer.putLong(index + SLICE_LENGTH_FIELD, length);
        buffer.putLong(index + SLICE_SENT_NS, sentNanos);
        buffer.putLong(index + SLICE_ACK_NS, ackNanos);
        buffer.putInt(index + SLICE_SLOT, clientSlot);
        buffer.putInt(index + SLICE_INDEX, sliceIndex);
        buffer.putInt(index + SLICE_PEER, peerId);
        buffer.putInt(index + SLICE_NIC, nicId);
        buffer.putInt(index + SLICE_STATUS, status);
        buffer.putInt(index + SLICE_STATUS + 4, 0);
        ring.commit(index);
        doorbell.ringIfAsleep();
    }

    @Override
    public void onCompleted(
        final int clientSlot,
        final long requestId,
        final long traceId,
        final int opcode,
        final int status,
        final long length,
        final long bytes,
        final int peerId,
        final int nicId,
        final long submitNanos,
        final long intakeNanos,
        final long completeNanos)
    {
        final int index = ring.tryClaim(COMPLETED, COMPLETED_RECORD_LENGTH);
        if (index < 0)
        {
            dropped.increment();
            doorbell.ringIfAsleep();
            return;
        }
        final AtomicBuffer buffer = ring.buffer();
        buffer.putLong(index + REQUEST_ID, requestId);
        buffer.putLong(index + TRACE_ID, traceId);
        buffer.putLong(index + COMPLETED_LENGTH_FIELD, length);
        buffer.putLong(index + COMPLETED_BYTES, bytes);
        buffer.putLong(index + COMPLETED_SUBMIT_NS, submitNanos);
        buffer.putLong(index + COMPLETED_INTAKE_NS, intakeNanos);
        buffer.putLong(index + COMPLETED_COMPLETE_NS, completeNanos);
        buffer.putInt(index + COMPLETED_SLOT, clientSlot);
        buffer.putInt(index + COMPLETED_OPCODE, opcode);
        buffer.putInt(index + COMPLETED_STATUS, status);
        buffer.putInt(index + COMPLETED_PEER, peerId);
        buffer.putInt(index + COMPLETED_NIC, nicId);
        buffer.putInt(index + COMPLETED_NIC + 4, 0);
        ring.commit(index);
        doorbell.ringIfAsleep();
    }

    @Override
    public int nameId(final String name)
    {
        return names.intern(name);
    }
}
