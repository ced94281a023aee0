package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.function.IntConsumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ControlFrameTest
{
    /**
     * Seed of the generated cases; -Dxferd.test.seed=N replays another run's cases (a failure names its seed).
     */
    private static final long SEED = Long.getLong("xferd.test.seed", 0x5EED_C0DEL);
    private static final int TRIES = 500;
    /**
     * The boundaries a random int rarely hits: the extremes, zero and its neighbours, and each side of the
     * frame's own limits.
     */
    private static final int[] EDGE_INTS = {
        Integer.MIN_VALUE, Integer.MIN_VALUE + 1, -1, 0, 1, 2, 3, 4, 7, 8, 9,
        ControlFrame.MAX_FRAME_LENGTH - 1, ControlFrame.MAX_FRAME_LENGTH, ControlFrame.MAX_FRAME_LENGTH + 1,
        Integer.MAX_VALUE - 1, Integer.MAX_VALUE};

    @Test
    void shouldEncodeAndDecodeAWelcome()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[ControlFrame.MAX_FRAME_LENGTH]);
        final ControlFrame frame = new ControlFrame().wrap(buffer, 0).begin(ControlMessages.WELCOME)
            .putInt(ControlMessages.WELCOME_CLIENT_SLOT, 3)
            .putInt(ControlMessages.WELCOME_MAX_IN_FLIGHT, 1024)
            .putLong(ControlMessages.WELCOME_RESERVED, 0L)
            .putLong(ControlMessages.WELCOME_SEGMENT_HANDLE, 77L)
            .putInt(ControlMessages.WELCOME_COMPLETION_RING_LENGTH, 65536 + 768)
            .putInt(ControlMessages.WELCOME_MAX_NOTIFY_LENGTH, 256)
            .putLong(ControlMessages.WELCOME_MAX_REQUEST_LENGTH, 1L << 32)
            .putInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH, 131072 + 768)
            .putInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES, 4096)
            .putInt(ControlMessages.WELCOME_SEGMENT_RPC_PORT, 40123)
            .putInt(ControlMessages.WELCOME_TRANSPORT, ControlMessages.TRANSPORT_TCP)
            .putString(ControlMessages.WELCOME_SEGMENT_NAME, "127.0.0.1:12001/decode-0");

        final ControlFrame read = new ControlFrame().wrap(buffer, 0);
        assertThat(ControlFrame.frameLength(buffer, 0)).isEqualTo(frame.length());
        assertThat(read.type()).isEqualTo(ControlMessages.WELCOME);
        assertThat(read.getInt(ControlMessages.WELCOME_CLIENT_SLOT)).isEqualTo(3);
        assertThat(read.getInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH)).isEqualTo(131072 + 768);
        assertThat(read.getInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES)).isEqualTo(4096);
        assertThat(read.getInt(ControlMessages.WELCOME_SEGMENT_RPC_PORT)).isEqualTo(40123);
        assertThat(ControlMessages.WELCOME_SEGMENT_NAME).as("the name follows the fixed fields").isEqualTo(56);
        assertThat(read.getLong(ControlMessages.WELCOME_MAX_REQUEST_LENGTH)).isEqualTo(1L << 32);
        assertThat(read.getString(ControlMessages.WELCOME_SEGMENT_NAME)).isEqualTo("127.0.0.1:12001/decode-0");
    }

    @Test
    void shouldRefuseToReadAFieldBeyondTheFrame()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
        final ControlFrame frame = new ControlFrame().wrap(buffer, 0).begin(ControlMessages.OPEN_SEGMENT)
            .putLong(ControlMessages.CORRELATION_ID, 1);

        assertThatThrownBy(() -> frame.getString(ControlMessages.OPEN_SEGMENT_NAME))
            .isInstanceOf(MalformedFrameException.class)
            .hasMessageContaining("beyond frame length");
    }

    @Test
    void anyDeclaredFrameLengthIsEitherWithinLimitsOrRejected()
    {
        forAnyInt(declaredLength ->
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocate(16));
            buffer.putInt(0, declaredLength);
            try
            {
                final int length = ControlFrame.frameLength(buffer, 0);
                assertThat(length).isBetween(ControlFrame.HEADER_LENGTH, ControlFrame.MAX_FRAME_LENGTH);
            }
            catch (final MalformedFrameException ex)
            {
                assertThat(declaredLength < ControlFrame.HEADER_LENGTH ||
                    declaredLength > ControlFrame.MAX_FRAME_LENGTH).isTrue();
            }
        });
    }

    @Test
    void aCorruptStringLengthIsAlwaysCaught()
    {
        forAnyInt(stringLength ->
        {
            // every frame length the property ever drew from (8 to 64): few enough to try them all
            for (int frameLength = 8; frameLength <= 64; frameLength++)
            {
                aCorruptStringLengthIsCaught(stringLength, frameLength);
            }
        });
    }

    private static void aCorruptStringLengthIsCaught(final int stringLength, final int frameLength)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
        buffer.putInt(ControlFrame.FRAME_LENGTH_OFFSET, frameLength);
        buffer.putInt(ControlFrame.TYPE_OFFSET, ControlMessages.HELLO);
        buffer.putInt(ControlFrame.HEADER_LENGTH + ControlMessages.HELLO_NAME, stringLength);
        final ControlFrame frame = new ControlFrame().wrap(buffer, 0);
        try
        {
            final String name = frame.getString(ControlMessages.HELLO_NAME);
            assertThat(ControlFrame.HEADER_LENGTH + ControlMessages.HELLO_NAME + 4 + name.length())
                .as("string length %d in a frame of %d", stringLength, frameLength)
                .isLessThanOrEqualTo(frameLength);
        }
        catch (final MalformedFrameException expected)
        {
            assertThat(expected).hasMessageNotContaining("null");
        }
    }

    /**
     * Runs the check on every edge case, then on {@link #TRIES} seeded ints (half of them small, where the
     * limits are); a failure names the seed and the value.
     */
    private static void forAnyInt(final IntConsumer check)
    {
        final Random random = new Random(SEED);
        for (int i = 0; i < EDGE_INTS.length + TRIES; i++)
        {
            final int value = i < EDGE_INTS.length ? EDGE_INTS[i] :
                random.nextBoolean() ? random.nextInt() : random.nextInt(-1024, 2 * ControlFrame.MAX_FRAME_LENGTH);
            try
            {
                check.accept(value);
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError("with value " + value + " (seed " + SEED + ", case " + i + ")", ex);
            }
        }
    }
}
