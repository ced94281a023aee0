package io.xferd.daemon.session;

import io.xferd.ipc.RingsFileDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The daemon's consumer of a client's submit ring, single-threaded: what an honest Agrona producer writes comes out
 * in order across wraps, consumed bytes are zeroed, and whatever a hostile producer writes, reading never throws,
 * never touches memory outside the ring, and never moves the head past the tail.
 */
class SubmitRingTest
{
    private static final int CAPACITY = 4096;
    private static final int TAIL = CAPACITY + RingsFileDescriptor.TAIL_OFFSET;
    private static final int HEAD = CAPACITY + RingsFileDescriptor.HEAD_OFFSET;

    private final UnsafeBuffer ring = new UnsafeBuffer(ByteBuffer.allocateDirect(RingsFileDescriptor.ringLength(CAPACITY)));
    private final List<Integer> lengths = new ArrayList<>();
    private final SubmitRing.RecordHandler taker = (type, buffer, offset, length) ->
    {
        lengths.add(length);
        assertThat(buffer.getByte(offset)).isEqualTo((byte)length);
        return SubmitRing.Action.TAKEN;
    };

    @Test
    void shouldTakeAnHonestProducersRecordsAcrossWrapsAndZeroWhatItConsumed()
    {
        final OneToOneRingBuffer producer = new OneToOneRingBuffer(ring);
        final SubmitRing consumer = new SubmitRing(ring);
        final UnsafeBuffer body = new UnsafeBuffer(new byte[CAPACITY / 8]);
        final Random random = new Random(12);
        int written = 0;
        for (int round = 0; round < 2000; round++)
        {
            final int length = 1 + random.nextInt(CAPACITY / 8 - 1);
            body.setMemory(0, length, (byte)length);
            if (producer.write(1, body, 0, length))
            {
                written++;
            }
            if (random.nextInt(3) == 0)
            {
                consumer.read(taker, 1 + random.nextInt(8));
                assertThat(ring.getLong(HEAD)).isLessThanOrEqualTo(ring.getLong(TAIL));
            }
        }
        while (consumer.read(taker, 100) > 0)
        {
            assertThat(consumer.isBroken()).isFalse();
        }
        assertThat(lengths).hasSize(written);
        assertThat(ring.getLong(HEAD)).isEqualTo(ring.getLong(TAIL));
        for (int i = 0; i < CAPACITY; i += 8)
        {
            if (i != (int)(ring.getLong(TAIL) & (CAPACITY - 1)))
            {
                assertThat(ring.getLong(i)).as("consumed bytes at " + i + " are zero").isZero();
            }
        }
    }

    @Test
    void shouldLeaveARecordTheHandlerCannotTakeYet()
    {
        final OneToOneRingBuffer producer = new OneToOneRingBuffer(ring);
        final SubmitRing consumer = new SubmitRing(ring);
        producer.write(1, new UnsafeBuffer(new byte[16]), 0, 16);

        assertThat(consumer.read((type, buffer, offset, length) -> SubmitRing.Action.LEAVE, 10)).isZero();
        assertThat(ring.getLong(HEAD)).isZero();
        assertThat(consumer.read((type, buffer, offset, length) -> SubmitRing.Action.TAKEN, 10)).isOne();
        assertThat(ring.getLong(HEAD)).isEqualTo(24);
    }

    @Test
    void shouldStallOnAHalfWrittenRecordAndOnOneTheTailDoesNotCover()
    {
        final SubmitRing consumer = new SubmitRing(ring);
        ring.putInt(0, -88);
        ring.putLong(TAIL, 88);
        assertThat(consumer.read(taker, 10)).isZero();
        ring.putInt(0, 88);
        ring.putLong(TAIL, 0);
        assertThat(consumer.read(taker, 10)).isZero();
        assertThat(consumer.isBroken()).isFalse();
        ring.putLong(TAIL, 88);
        ring.putByte(8, (byte)80);
        assertThat(consumer.read(taker, 10)).isOne();
    }

    @Test
    void shouldKeepItsOwnHeadWhateverTheClientWritesIntoTheHeadField()
    {
        final OneToOneRingBuffer producer = new OneToOneRingBuffer(ring);
        final SubmitRing consumer = new SubmitRing(ring);
        final UnsafeBuffer body = new UnsafeBuffer(new byte[8]);
        body.setMemory(0, 8, (byte)8);
        producer.write(1, body, 0, 8);
        ring.putLong(HEAD, 1_000_000);
        assertThat(consumer.read(taker, 10)).isOne();
        assertThat(ring.getLong(HEAD)).as("written from its own position").isEqualTo(16);
    }

    @Test
    void shouldBreakOnTheProtocolsViolations()
    {
        assertBroken(() -> ring.putLong(TAIL, CAPACITY + 8), "tail position");
        assertBroken(() -> ring.putLong(TAIL, -8), "tail position");
        assertBroken(() -> record(4, 1, 8), "record length 4");
        assertBroken(() -> record(CAPACITY + 8, 1, CAPACITY), "record length");
        assertBroken(() -> record(64, -1, 64), "padding record");
        assertBroken(() -> record(16, 1, 16), "malformed");
    }

    @Test
    void shouldNeverThrowNorPassTheTailWhateverTheBytes()
    {
        final Random random = new Random(0xF022);
        final byte[] garbage = new byte[CAPACITY];
        for (int i = 0; i < 20_000; i++)
        {
            random.nextBytes(garbage);
            ring.putBytes(0, garbage, 0, random.nextInt(CAPACITY));
            ring.putLong(TAIL, random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(CAPACITY + 1));
            ring.putLong(HEAD, 0);
            final SubmitRing consumer = new SubmitRing(ring);
            consumer.read((type, buffer, offset, length) ->
            {
                assertThat(offset + length).isLessThanOrEqualTo(CAPACITY);
                return random.nextBoolean() ? SubmitRing.Action.TAKEN : SubmitRing.Action.MALFORMED;
            }, 64);
            final long head = ring.getLong(HEAD);
            assertThat(head).isBetween(0L, (long)CAPACITY);
            if (!consumer.isBroken())
            {
                assertThat(head).isLessThanOrEqualTo(ring.getLong(TAIL));
            }
            ring.setMemory(0, RingsFileDescriptor.ringLength(CAPACITY), (byte)0);
        }
    }

    private void record(final int length, final int type, final long tail)
    {
        ring.putLong(TAIL, tail);
        ring.putInt(4, type);
        ring.putInt(0, length);
    }

    private void assertBroken(final Runnable write, final String reason)
    {
        ring.setMemory(0, RingsFileDescriptor.ringLength(CAPACITY), (byte)0);
        write.run();
        final SubmitRing consumer = new SubmitRing(ring);
        consumer.read((type, buffer, offset, length) -> SubmitRing.Action.MALFORMED, 10);
        assertThat(consumer.isBroken()).isTrue();
        assertThat(consumer.violation()).contains(reason);
        assertThat(consumer.read(taker, 10)).as("never read again").isZero();
    }
}
