package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.transport.PeerProtocol;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import static org.assertj.core.api.Assertions.assertThat;

class FrameMacTest
{
    private static final int FIELDS = PeerProtocol.REQUEST_SIGNED_LENGTH;

    private static byte[] key(final long seed)
    {
        final byte[] key = new byte[32];
        new SplittableRandom(seed).nextBytes(key);
        return key;
    }

    private static ByteBuffer frame(final long seed)
    {
        final ByteBuffer frame = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_FIELDS_LENGTH);
        final SplittableRandom random = new SplittableRandom(seed);
        frame.putInt(PeerProtocol.REQUEST_FIELDS_LENGTH).putInt(PeerProtocol.READ);
        for (int i = 0; i < FIELDS / 8; i++)
        {
            frame.putLong(random.nextLong());
        }
        return frame;
    }

    @Test
    void shouldBeTheStandardHmacSha256OfSequenceHeaderAndFieldsTruncatedTo16Bytes() throws Exception
    {
        final byte[] key = key(1);
        final FrameMac mac = new FrameMac(key);
        final Mac reference = Mac.getInstance("HmacSHA256");
        reference.init(new SecretKeySpec(key, "HmacSHA256"));
        for (long sequence = 0; sequence < 3; sequence++)
        {
            final ByteBuffer frame = frame(sequence);
            mac.sign(PeerProtocol.REQUEST_FIELDS_LENGTH, PeerProtocol.READ, frame, PeerProtocol.HEADER_LENGTH,
                PeerProtocol.HEADER_LENGTH + FIELDS);

            final ByteBuffer input = ByteBuffer.allocate(16 + FIELDS).order(ByteOrder.LITTLE_ENDIAN);
            input.putLong(sequence).putInt(PeerProtocol.REQUEST_FIELDS_LENGTH).putInt(PeerProtocol.READ);
            for (int i = 0; i < FIELDS; i++)
            {
                input.put(frame.get(PeerProtocol.HEADER_LENGTH + i));
            }
            final byte[] expected = Arrays.copyOf(reference.doFinal(input.array()), PeerProtocol.TAG_LENGTH);
            final byte[] tag = new byte[PeerProtocol.TAG_LENGTH];
            frame.get(PeerProtocol.HEADER_LENGTH + FIELDS, tag);
            assertThat(tag).isEqualTo(expected);
        }
    }

    @Test
    void shouldAcceptTheFramesOfTheSameKeyInOrderAndNothingAlteredReplayedOrReordered()
    {
        final FrameMac sender = new FrameMac(key(2));
        final ByteBuffer first = signed(sender, 10);
        final ByteBuffer second = signed(sender, 11);

        // in order: accepted
        assertThat(verify(new FrameMac(key(2)), first, PeerProtocol.REQUEST_FIELDS_LENGTH)).isTrue();
        // another key: refused
        assertThat(verify(new FrameMac(key(3)), first, PeerProtocol.REQUEST_FIELDS_LENGTH)).isFalse();
        // reordered (the second frame first) or replayed (the first frame twice): refused
        assertThat(verify(new FrameMac(key(2)), second, PeerProtocol.REQUEST_FIELDS_LENGTH)).isFalse();
        final FrameMac replayed = new FrameMac(key(2));
        assertThat(verify(replayed, first, PeerProtocol.REQUEST_FIELDS_LENGTH)).isTrue();
        assertThat(verify(replayed, first, PeerProtocol.REQUEST_FIELDS_LENGTH)).isFalse();
        // a header whose length was altered: refused
        assertThat(verify(new FrameMac(key(2)), first, PeerProtocol.REQUEST_FIELDS_LENGTH + 1)).isFalse();
        // every single-bit change of the fields (handle, address, length...) and of the tag: refused
        for (int bit = 0; bit < 8 * (FIELDS + PeerProtocol.TAG_LENGTH); bit++)
        {
            final ByteBuffer altered = copy(first);
            final int index = PeerProtocol.HEADER_LENGTH + bit / 8;
            altered.put(index, (byte)(altered.get(index) ^ (1 << (bit % 8))));
            assertThat(verify(new FrameMac(key(2)), altered, PeerProtocol.REQUEST_FIELDS_LENGTH))
                .as("bit %d", bit).isFalse();
        }
    }

    @Test
    void shouldWriteZeroTagsAndCheckNothingWithoutAuthentication()
    {
        final ByteBuffer frame = signed(new FrameMac(null), 4);
        for (int i = 0; i < PeerProtocol.TAG_LENGTH; i++)
        {
            assertThat(frame.get(PeerProtocol.HEADER_LENGTH + FIELDS + i)).isZero();
        }
        assertThat(new FrameMac(null).authenticates()).isFalse();
        assertThat(verify(new FrameMac(null), frame(5), 1)).isTrue();
    }

    @Test
    void shouldLeaveTheBuffersPositionAndLimitAsTheyWere()
    {
        final ByteBuffer frame = frame(6);
        frame.position(5);
        new FrameMac(key(6)).sign(1, 2, frame, PeerProtocol.HEADER_LENGTH, PeerProtocol.HEADER_LENGTH + FIELDS);
        assertThat(frame.position()).isEqualTo(5);
        assertThat(frame.limit()).isEqualTo(frame.capacity());
    }

    private static ByteBuffer signed(final FrameMac mac, final long seed)
    {
        final ByteBuffer frame = frame(seed);
        mac.sign(PeerProtocol.REQUEST_FIELDS_LENGTH, PeerProtocol.READ, frame, PeerProtocol.HEADER_LENGTH,
            PeerProtocol.HEADER_LENGTH + FIELDS);
        return frame;
    }

    private static boolean verify(final FrameMac mac, final ByteBuffer frame, final int bodyLength)
    {
        return mac.verify(bodyLength, PeerProtocol.READ, frame, PeerProtocol.HEADER_LENGTH,
            PeerProtocol.HEADER_LENGTH + FIELDS);
    }

    private static ByteBuffer copy(final ByteBuffer frame)
    {
        final ByteBuffer copy = FrameIo.newBuffer(frame.capacity());
        for (int i = 0; i < frame.capacity(); i++)
        {
            copy.put(i, frame.get(i));
        }
        return copy;
    }
}
