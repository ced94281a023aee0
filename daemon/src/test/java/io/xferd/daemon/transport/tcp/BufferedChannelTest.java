package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.transport.PeerProtocol;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link BufferedChannel} on a real loopback connection, as a specification: payloads read partly from the buffer,
 * partly straight into their target, and the frames after them, land byte for byte whatever pieces the stream
 * arrives in;
 * answers wait while the peer's next requests are already readable and leave, together, before the channel would
 * block, so a peer that waits for them is never left waiting; a stream cut short fails the read, never fills it.
 */
@Timeout(60)
class BufferedChannelTest
{
    private static final long SEED = Long.getLong("xferd.test.seed", 16L);
    private static final int ANSWER_LENGTH = PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH;

    private final ServerSocketChannel listener;
    private final SocketChannel peer;
    private final SocketChannel served;

    BufferedChannelTest() throws IOException
    {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        peer = SocketChannel.open(listener.getLocalAddress());
        served = listener.accept();
    }

    @AfterEach
    void close() throws IOException
    {
        peer.close();
        served.close();
        listener.close();
    }

    @Test
    void shouldLandEveryPayloadAndTheFramesAfterItByteForByteWhateverPiecesTheStreamComesIn() throws Exception
    {
        final Random random = new Random(SEED);
        final int frames = 300;
        final int[] lengths = new int[frames];
        for (int i = 0; i < frames; i++)
        {
            // around the read-ahead: payloads inside it, straddling it, many times it, and empty ones
            lengths[i] = random.nextInt(4) == 0 ? 0 : random.nextInt(5 * BufferedChannel.READ_AHEAD);
        }
        final CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> writeInRandomPieces(lengths, SEED));
        final BufferedChannel channel = new BufferedChannel(served, SystemNanoClock.INSTANCE, 64 * 1024, 0);
        final ByteBuffer target = FrameIo.newBuffer(5 * BufferedChannel.READ_AHEAD);

        for (int i = 0; i < frames; i++)
        {
            final ByteBuffer header = channel.require(8);
            assertThat(header.getInt()).as("frame %d's index", i).isEqualTo(i);
            final int length = header.getInt();
            assertThat(length).as("frame %d's length", i).isEqualTo(lengths[i]);
            target.clear().limit(length);
            channel.readFully(target);
            assertThat(target.hasRemaining()).isFalse();
            for (int b = 0; b < length; b++)
            {
                assertThat(target.get(b)).as("frame %d byte %d", i, b).isEqualTo(patternByte(i, b));
            }
        }
        writer.get();
    }

    @Test
    void shouldHoldAnswersWhileRequestsAreReadableAndSendThemTogetherBeforeBlocking() throws Exception
    {
        // four requests whose payloads each need a read of their own (longer than the read-ahead), all readable
        // before the first is answered; then a fifth, sent only once the four answers came
        final int requests = 4;
        final int payload = 2 * BufferedChannel.READ_AHEAD;
        final ByteBuffer burst = FrameIo.newBuffer(requests * (8 + payload));
        for (int i = 0; i < requests; i++)
        {
            burst.putInt(i).putInt(payload).position(burst.position() + payload);
        }
        FrameIo.writeFully(peer, burst.flip());
        final BufferedChannel channel = new BufferedChannel(served, SystemNanoClock.INSTANCE, 64 * 1024, ANSWER_LENGTH);
        final AtomicReference<Long> flushesBeforeFifth = new AtomicReference<>();
        final CompletableFuture<Void> server = CompletableFuture.runAsync(() ->
        {
            try
            {
                final ByteBuffer target = FrameIo.newBuffer(payload);
                for (int i = 0; i < requests; i++)
                {
                    final int index = channel.require(8).getInt();
                    channel.readFully(target.clear().limit(channel.input().getInt()));
                    queueAnswer(channel, index);
                }
                channel.require(8); // the fifth has not been sent: the answers must leave before this blocks
                flushesBeforeFifth.set(channel.flushes());
            }
            catch (final IOException ex)
            {
                throw new RuntimeException(ex);
            }
        });

        final ByteBuffer answers = FrameIo.newBuffer(requests * ANSWER_LENGTH);
        FrameIo.readFully(peer, answers);
        for (int i = 0; i < requests; i++)
        {
            assertThat(answers.getLong(i * ANSWER_LENGTH + PeerProtocol.HEADER_LENGTH)).as("answer %d", i)
                .isEqualTo(i);
        }
        FrameIo.writeFully(peer, FrameIo.newBuffer(8));
        server.get();
        assertThat(flushesBeforeFifth.get()).as("four answers, one write").isEqualTo(1);
    }

    @Test
    void shouldSendHeldAnswersOnceTheirWritesReachAnAnswerBatchOfBytesWhileRequestsAreStillReadable() throws Exception
    {
        // four requests whose payloads each need a read of their own, all readable from the start, each answered
        // as a WRITE of half a batch's bytes: the first two answers cover a batch and leave at the next read (the
        // peer's window, a few MiB, reopens on them), not once nothing is readable
        final int requests = 4;
        final int payload = 2 * BufferedChannel.READ_AHEAD;
        final ByteBuffer burst = FrameIo.newBuffer(requests * (8 + payload));
        for (int i = 0; i < requests; i++)
        {
            burst.putInt(i).putInt(payload).position(burst.position() + payload);
        }
        FrameIo.writeFully(peer, burst.flip());
        final BufferedChannel channel = new BufferedChannel(served, SystemNanoClock.INSTANCE, 64 * 1024, ANSWER_LENGTH);
        final ByteBuffer target = FrameIo.newBuffer(payload);
        final long[] flushesAfterPayload = new long[requests];
        for (int i = 0; i < requests; i++)
        {
            final int index = channel.require(8).getInt();
            channel.readFully(target.clear().limit(channel.input().getInt()));
            flushesAfterPayload[i] = channel.flushes();
            channel.nextAnswerHeader().putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
                .putLong(index).putInt(0).putInt(0).putLong(0);
            channel.answer(null, null, BufferedChannel.ANSWER_BATCH_BYTES / 2);
        }

        assertThat(flushesAfterPayload).as("writes of answers, counted after each request's payload was read")
            .containsExactly(0, 0, 1, 1);
        final ByteBuffer answers = FrameIo.newBuffer(2 * ANSWER_LENGTH);
        FrameIo.readFully(peer, answers);
        assertThat(answers.getLong(PeerProtocol.HEADER_LENGTH)).isEqualTo(0);
        assertThat(answers.getLong(ANSWER_LENGTH + PeerProtocol.HEADER_LENGTH)).isEqualTo(1);
    }

    @Test
    void shouldSendTheAnswerEndingARequestAtOnceWithThoseHeldBeforeItWhileRequestsAreStillReadable() throws Exception
    {
        // three slices readable from the start, each needing a read of its own: the first in the middle of its
        // request (held), the second ending it (the initiator's client waits for it: it leaves now, with the first),
        // the third in the middle of the next request (held again, though far from a batch's bytes)
        final int requests = 3;
        final int payload = 2 * BufferedChannel.READ_AHEAD;
        final ByteBuffer burst = FrameIo.newBuffer(requests * (8 + payload));
        for (int i = 0; i < requests; i++)
        {
            burst.putInt(i).putInt(payload).position(burst.position() + payload);
        }
        FrameIo.writeFully(peer, burst.flip());
        final BufferedChannel channel = new BufferedChannel(served, SystemNanoClock.INSTANCE, 64 * 1024, ANSWER_LENGTH);
        final ByteBuffer target = FrameIo.newBuffer(payload);
        final long[] flushesAfterAnswer = new long[requests];
        for (int i = 0; i < requests; i++)
        {
            final int index = channel.require(8).getInt();
            channel.readFully(target.clear().limit(channel.input().getInt()));
            channel.nextAnswerHeader().putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
                .putLong(index).putInt(0).putInt(0).putLong(0);
            if (index == 1)
            {
                channel.answerEndingRequest(payload);
            }
            else
            {
                channel.answer(null, null, payload);
            }
            flushesAfterAnswer[i] = channel.flushes();
        }

        assertThat(flushesAfterAnswer).as("writes of answers, counted after each answer was queued")
            .containsExactly(0, 1, 1);
        final ByteBuffer answers = FrameIo.newBuffer(2 * ANSWER_LENGTH);
        FrameIo.readFully(peer, answers);
        assertThat(answers.getLong(PeerProtocol.HEADER_LENGTH)).isEqualTo(0);
        assertThat(answers.getLong(ANSWER_LENGTH + PeerProtocol.HEADER_LENGTH)).isEqualTo(1);
        assertThat(peer.socket().getInputStream().available()).as("the third answer is still held").isZero();
    }

    @Test
    void shouldNeverHoldAnAnswerAPeerWithASmallWindowWaitsFor() throws Exception
    {
        // the peer sends at most two requests ahead of their answers, as an initiator with a full window does: an
        // answer held while the channel blocks would stall both sides until the test's timeout
        final int requests = 2_000;
        final int window = 2;
        final BufferedChannel channel = new BufferedChannel(served, SystemNanoClock.INSTANCE, 64 * 1024, ANSWER_LENGTH);
        final CompletableFuture<Void> server = CompletableFuture.runAsync(() ->
        {
            try
            {
                final ByteBuffer payload = FrameIo.newBuffer(3 * BufferedChannel.READ_AHEAD);
                for (int i = 0; i < requests; i++)
                {
                    final ByteBuffer header = channel.require(8);
                    final int index = header.getInt();
                    payload.clear().limit(header.getInt());
                    channel.readFully(payload);
                    queueAnswer(channel, index);
                }
                channel.require(8); // blocks until the peer closes: the last answers go out first
            }
            catch (final EOFException expected)
            {
                // the peer closed after its last answer
            }
            catch (final IOException ex)
            {
                throw new RuntimeException(ex);
            }
        });
        final Random random = new Random(SEED);
        final ByteBuffer frame = FrameIo.newBuffer(8 + 3 * BufferedChannel.READ_AHEAD);
        final ByteBuffer answer = FrameIo.newBuffer(ANSWER_LENGTH);
        int answered = 0;
        for (int sent = 0; sent < requests; sent++)
        {
            if (sent - answered == window)
            {
                answer.clear();
                FrameIo.readFully(peer, answer);
                assertThat(answer.getLong(PeerProtocol.HEADER_LENGTH)).isEqualTo(answered++);
            }
            final int length = random.nextInt(3 * BufferedChannel.READ_AHEAD);
            frame.clear().putInt(sent).putInt(length).position(8 + length).flip();
            FrameIo.writeFully(peer, frame);
        }
        while (answered < requests)
        {
            answer.clear();
            FrameIo.readFully(peer, answer);
            assertThat(answer.getLong(PeerProtocol.HEADER_LENGTH)).isEqualTo(answered++);
        }
        peer.close();
        server.get();
    }

    @Test
    void shouldFailAReadWhosePayloadIsCutShortInsteadOfFillingItsTarget() throws Exception
    {
        final ByteBuffer frame = FrameIo.newBuffer(8 + 1000);
        frame.putInt(0).putInt(20_000).position(frame.capacity()).flip();
        FrameIo.writeFully(peer, frame);
        peer.close();
        final BufferedChannel channel = new BufferedChannel(served, SystemNanoClock.INSTANCE, 64 * 1024, 0);
        final ByteBuffer header = channel.require(8);
        header.getInt();
        final ByteBuffer target = FrameIo.newBuffer(header.getInt());

        assertThatThrownBy(() -> channel.readFully(target)).isInstanceOf(EOFException.class);
        assertThat(target.position()).as("only what arrived").isEqualTo(1000);
    }

    private static void queueAnswer(final BufferedChannel channel, final int index) throws IOException
    {
        channel.nextAnswerHeader().putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
            .putLong(index).putInt(0).putInt(0).putLong(0);
        channel.answer(null, null);
    }

    private void writeInRandomPieces(final int[] lengths, final long seed)
    {
        final Random random = new Random(seed + 1);
        int total = 0;
        for (final int length : lengths)
        {
            total += 8 + length;
        }
        final ByteBuffer stream = ByteBuffer.allocateDirect(total).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < lengths.length; i++)
        {
            stream.putInt(i).putInt(lengths[i]);
            for (int b = 0; b < lengths[i]; b++)
            {
                stream.put(patternByte(i, b));
            }
        }
        stream.flip();
        try
        {
            while (stream.hasRemaining())
            {
                final int piece = 1 + random.nextInt(random.nextBoolean() ? 16 : 3 * BufferedChannel.READ_AHEAD);
                final ByteBuffer slice = stream.slice(stream.position(), Math.min(piece, stream.remaining()));
                FrameIo.writeFully(peer, slice);
                stream.position(stream.position() + slice.capacity());
            }
        }
        catch (final IOException ex)
        {
            throw new RuntimeException(ex);
        }
    }

    private static byte patternByte(final int frame, final int index)
    {
        return (byte)(frame * 31 + index * 7 + (index >> 8));
    }
}
