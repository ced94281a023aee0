package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocol restates Agrona's ring layout as constants a client in another language codes against: these must
 * stay equal to what the Agrona in the build really writes.
 */
class RingsFileDescriptorTest
{
    @Test
    void shouldStateAgronasTrailerOffsets()
    {
        assertThat(RingsFileDescriptor.TRAILER_LENGTH).isEqualTo(RingBufferDescriptor.TRAILER_LENGTH);
        assertThat(RingsFileDescriptor.TAIL_OFFSET).isEqualTo(RingBufferDescriptor.TAIL_POSITION_OFFSET);
        assertThat(RingsFileDescriptor.HEAD_CACHE_OFFSET).isEqualTo(RingBufferDescriptor.HEAD_CACHE_POSITION_OFFSET);
        assertThat(RingsFileDescriptor.HEAD_OFFSET).isEqualTo(RingBufferDescriptor.HEAD_POSITION_OFFSET);
        assertThat(RingsFileDescriptor.CORRELATION_COUNTER_OFFSET)
            .isEqualTo(RingBufferDescriptor.CORRELATION_COUNTER_OFFSET);
        assertThat(RingsFileDescriptor.CONSUMER_HEARTBEAT_OFFSET)
            .isEqualTo(RingBufferDescriptor.CONSUMER_HEARTBEAT_OFFSET);
        assertThat(RingsFileDescriptor.RECORD_HEADER_LENGTH).isEqualTo(RecordDescriptor.HEADER_LENGTH);
        assertThat(RingsFileDescriptor.RECORD_ALIGNMENT).isEqualTo(RecordDescriptor.ALIGNMENT);
        assertThat(RingsFileDescriptor.PADDING_TYPE).isEqualTo(org.agrona.concurrent.ringbuffer.RingBuffer.PADDING_MSG_TYPE_ID);
    }

    @Test
    void shouldFindAgronasRecordAndTailWhereTheProtocolSays()
    {
        final int capacity = 1024;
        final UnsafeBuffer ring = new UnsafeBuffer(ByteBuffer.allocateDirect(RingsFileDescriptor.ringLength(capacity)));
        final OneToOneRingBuffer producer = new OneToOneRingBuffer(ring);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[13]);
        message.setMemory(0, 13, (byte)7);
        assertThat(producer.write(RecordTypes.SUBMIT, message, 0, 13)).isTrue();

        final ByteBuffer raw = ring.byteBuffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        assertThat(raw.getInt(0)).as("length: header + body, before padding").isEqualTo(8 + 13);
        assertThat(raw.getInt(4)).isEqualTo(RecordTypes.SUBMIT);
        assertThat(raw.get(8)).isEqualTo((byte)7);
        assertThat(raw.getLong(capacity + 128)).as("tail advanced by the aligned length").isEqualTo(24);
        assertThat(raw.getLong(capacity + 384)).as("head").isZero();
    }

    @Test
    void shouldPlaceTheSubmitRingAfterTheCompletionRing()
    {
        final int completion = RingsFileDescriptor.ringLength(4096);
        final int submit = RingsFileDescriptor.ringLength(8192);
        final UnsafeBuffer rings = new UnsafeBuffer(
            ByteBuffer.allocateDirect((int)RingsFileDescriptor.fileLength(completion, submit)));

        assertThat(RingsFileDescriptor.completionRing(rings, completion).capacity()).isEqualTo(4096 + 768);
        final UnsafeBuffer submitRing = RingsFileDescriptor.submitRing(rings, completion, submit);
        assertThat(submitRing.capacity()).isEqualTo(8192 + 768);
        assertThat(submitRing.addressOffset() - rings.addressOffset()).isEqualTo(completion);
    }
}
