package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.SegmentDescriptor;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A hand-driven peer connection for tests that must send frames a daemon's own initiator never would. It speaks
 * the real handshake and tags its frames with the session's keys.
 */
public final class RawPeer implements AutoCloseable
{
    private final SocketChannel channel;
    private final PeerSession session;

    private RawPeer(final SocketChannel channel, final PeerSession session)
    {
        this.channel = channel;
        this.session = session;
    }

    /**
     * @param rpcAddress host:port of the daemon's peer server.
     * @param token      the cluster token to prove.
     */
    public static RawPeer connect(final String rpcAddress, final String token) throws IOException
    {
        return connect(rpcAddress, token, 0);
    }

    /**
     * @param flags offered in the HELLO, e.g. {@code PeerProtocol.FLAG_ANSWERS_BY_ID} (answers in any order).
     */
    public static RawPeer connect(final String rpcAddress, final String token, final int flags) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(PeerRpcClient.socketAddress(rpcAddress));
        try
        {
            return new RawPeer(channel,
                PeerHandshake.asInitiator(channel, PeerAuthenticator.withToken(token, 1), flags));
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    /**
     * Connect claiming to run without peer authentication.
     */
    public static RawPeer connectWithoutAuthentication(final String rpcAddress) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(PeerRpcClient.socketAddress(rpcAddress));
        try
        {
            return new RawPeer(channel, PeerHandshake.asInitiator(channel, PeerAuthenticator.unauthenticated(1)));
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    /**
     * Claim to have a token, send an all-zero proof, then ask for {@code segmentName} anyway.
     *
     * @return what came back after the proof: "closed" when the daemon closed the connection without a word.
     */
    public static String zeroProofThenAsk(final String rpcAddress, final String segmentName) throws IOException
    {
        try (SocketChannel channel = SocketChannel.open(PeerRpcClient.socketAddress(rpcAddress)))
        {
            final ByteBuffer hello = ByteBuffer.allocate(PeerProtocol.HELLO_LENGTH)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
            hello.putInt(PeerProtocol.MAGIC).putInt(PeerProtocol.VERSION).putInt(0).putInt(0)
                .put(new byte[PeerProtocol.NONCE_LENGTH]).putLong(1);
            FrameIo.sendFrame(channel, PeerProtocol.HELLO, hello.array());
            FrameIo.receiveFrame(channel, PeerProtocol.CHALLENGE, 4096);
            FrameIo.sendFrame(channel, PeerProtocol.PROOF, new byte[PeerProtocol.PROOF_LENGTH]);
            try
            {
                FrameIo.sendFrame(channel, PeerProtocol.GET_SEGMENT, segmentName.getBytes(StandardCharsets.UTF_8));
            }
            catch (final IOException ex)
            {
                return "closed";
            }
            final ByteBuffer rest = ByteBuffer.allocate(4096);
            int total = 0;
            try
            {
                int n;
                while ((n = channel.read(rest)) > 0)
                {
                    total += n;
                }
            }
            catch (final IOException ex)
            {
                // reset by the daemon
            }
            return total == 0 ? "closed" : total + " bytes";
        }
    }

    /**
     * @return the segment's handle on this daemon.
     */
    public long handle(final String segmentName) throws IOException
    {
        FrameIo.sendFrame(channel, session.out(), PeerProtocol.GET_SEGMENT,
            segmentName.getBytes(StandardCharsets.UTF_8));
        final ByteBuffer body = FrameIo.receiveFrame(channel, session.in(), PeerProtocol.DESCRIPTOR);
        final int status = body.getInt();
        final String json = FrameIo.utf8(body);
        if (status != 0)
        {
            throw new IOException(json);
        }
        return SegmentDescriptor.fromJson(json).handle();
    }

    /**
     * Send one READ slice that is its whole request.
     */
    public void read(final long sliceId, final long handle, final long address, final long length) throws IOException
    {
        request(PeerProtocol.READ, sliceId, handle, address, length, 0, true);
    }

    /**
     * Send the header and fields of one WRITE slice that is its whole request, with {@code sent} of its
     * {@code length} payload bytes (the rest never comes, as from a stalled or vanished peer).
     */
    public void writeHead(final long sliceId, final long handle, final long address, final long length, final int sent)
        throws IOException
    {
        request(PeerProtocol.WRITE, sliceId, handle, address, length, sent, true);
    }

    /**
     * Send {@code length} more payload bytes (zeros) of the WRITE begun by {@link #writeHead}.
     */
    public void writePayload(final int length) throws IOException
    {
        FrameIo.writeFully(channel, ByteBuffer.allocate(length));
    }

    /**
     * Send one READ slice whose tag is wrong (as a forged or altered frame would have).
     */
    public void readWithBadTag(final long sliceId, final long handle, final long address, final long length)
        throws IOException
    {
        request(PeerProtocol.READ, sliceId, handle, address, length, 0, false);
    }

    /**
     * One whole WRITE frame (a slice that is its whole request) with {@code sent} payload bytes of pattern
     * {@code fill}, tagged now (so frames must be sent in the order they were made), for {@link #send}.
     */
    public ByteBuffer writeFrame(
        final long sliceId, final long handle, final long address, final long length, final int sent, final byte fill,
        final boolean goodTag)
    {
        return filled(
            frame(PeerProtocol.WRITE, sliceId, handle, address, length, address, length, sent, goodTag), fill);
    }

    /**
     * One whole WRITE frame of a slice of the request {@code [requestAddress, requestAddress + requestLength)}, its
     * payload of pattern {@code fill}, tagged now, for {@link #send}.
     */
    public ByteBuffer writeSliceFrame(
        final long sliceId, final long handle, final long address, final int length, final long requestAddress,
        final long requestLength, final byte fill)
    {
        return filled(frame(PeerProtocol.WRITE, sliceId, handle, address, length, requestAddress, requestLength, length,
            true), fill);
    }

    private static ByteBuffer filled(final ByteBuffer frame, final byte fill)
    {
        for (int i = PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_FIELDS_LENGTH; i < frame.limit(); i++)
        {
            frame.put(i, fill);
        }
        return frame;
    }

    /**
     * Send frames back to back in one gathering write, as an initiator batching its queue does.
     */
    public void send(final ByteBuffer... frames) throws IOException
    {
        FrameIo.writeFully(channel, frames);
    }

    /**
     * Send nothing more (the daemon reads end of stream), still reading what it answers.
     */
    public void finishSending() throws IOException
    {
        channel.shutdownOutput();
    }

    /**
     * @return the slice ids of the answers that come before the daemon closes the connection, with status OK.
     * @throws IOException when an answer has another status.
     */
    public java.util.List<Long> okAnswersUntilClosed() throws IOException
    {
        final java.util.List<Long> answered = new java.util.ArrayList<>();
        while (true)
        {
            final long[] answer;
            try
            {
                answer = ack();
            }
            catch (final IOException ex)
            {
                return answered;
            }
            if (answer[1] != 0)
            {
                throw new IOException("answer to slice " + answer[0] + " has status " + answer[1]);
            }
            answered.add(answer[0]);
        }
    }

    private void request(
        final int type, final long sliceId, final long handle, final long address, final long length, final int sent,
        final boolean goodTag) throws IOException
    {
        FrameIo.writeFully(channel,
            frame(type, sliceId, handle, address, length, address, length, sent, goodTag));
    }

    private ByteBuffer frame(
        final int type, final long sliceId, final long handle, final long address, final long length,
        final long requestAddress, final long requestLength, final int sent, final boolean goodTag)
    {
        final int tagAt = PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_SIGNED_LENGTH;
        final ByteBuffer frame = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_FIELDS_LENGTH + sent);
        final int bodyLength = PeerProtocol.REQUEST_FIELDS_LENGTH + (type == PeerProtocol.WRITE ? (int)length : 0);
        frame.putInt(bodyLength).putInt(type).putLong(sliceId).putLong(handle)
            .putLong(address).putLong(length).putLong(requestAddress).putLong(requestLength);
        session.out().sign(bodyLength, type, frame, PeerProtocol.HEADER_LENGTH, tagAt);
        if (!goodTag)
        {
            frame.put(tagAt, (byte)(frame.get(tagAt) ^ 1));
        }
        return frame.position(0).limit(frame.capacity());
    }

    /**
     * Wait (blocking, bounded by the caller's test timeout) for the next answer.
     *
     * @return {sliceId, status, payload length}; the payload, if any, is left unread.
     * @throws EOFException when the daemon closed the connection instead.
     */
    public long[] ack() throws IOException
    {
        final ByteBuffer answer = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
        while (answer.hasRemaining())
        {
            if (channel.read(answer) < 0)
            {
                throw new EOFException("the daemon closed the connection");
            }
        }
        answer.flip();
        final int bodyLength = answer.getInt();
        final int type = answer.getInt();
        if (type != PeerProtocol.ACK)
        {
            throw new IOException("frame type " + type);
        }
        if (!session.in().verify(bodyLength, type, answer, PeerProtocol.HEADER_LENGTH,
            PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_SIGNED_LENGTH))
        {
            throw new IOException("the ACK's tag is wrong");
        }
        final long sliceId = answer.getLong();
        final int status = answer.getInt();
        answer.getInt();
        return new long[] {sliceId, status, answer.getLong()};
    }

    /**
     * @return the next {@code length} bytes (an answer's payload).
     */
    public byte[] payload(final int length) throws IOException
    {
        final ByteBuffer bytes = ByteBuffer.allocate(length);
        FrameIo.readFully(channel, bytes);
        return bytes.array();
    }

    /**
     * @return how many bytes the daemon has sent that are not read yet (FIONREAD; does not wait).
     */
    public int available() throws IOException
    {
        return channel.socket().getInputStream().available();
    }

    /**
     * Skip {@code length} bytes of payload.
     */
    public void skip(final long length) throws IOException
    {
        FrameIo.skip(channel, FrameIo.newBuffer(64 * 1024), length);
    }

    /**
     * @return true when the daemon closed this connection (read returns end of stream), waiting at most until the
     * caller's test timeout.
     */
    public boolean closedByDaemon() throws IOException
    {
        final ByteBuffer one = ByteBuffer.allocate(1);
        try
        {
            return channel.read(one) < 0;
        }
        catch (final IOException ex)
        {
            return true;
        }
    }

    @Override
    public void close() throws IOException
    {
        channel.close();
    }
}
