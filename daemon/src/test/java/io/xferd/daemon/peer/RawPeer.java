package io.xferd.daemon.peer;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A hand-driven peer connection for tests that must send frames a daemon's own initiator never would.
 */
public final class RawPeer implements AutoCloseable
{
    private final SocketChannel channel;

    private RawPeer(final SocketChannel channel)
    {
        this.channel = channel;
    }

    /**
     * @param rpcAddress host:port of the daemon's peer server (no token).
     */
    public static RawPeer connect(final String rpcAddress) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(PeerRpcClient.socketAddress(rpcAddress));
        channel.socket().setSoTimeout(10_000);
        PeerHandshake.asClient(channel, new PeerAuthenticator(null));
        return new RawPeer(channel);
    }

    /**
     * @return the segment's handle on this daemon.
     */
    public long handle(final String segmentName) throws IOException
    {
        FrameIo.sendFrame(channel, PeerProtocol.GET_SEGMENT, segmentName.getBytes(StandardCharsets.UTF_8));
        final ByteBuffer body = FrameIo.receiveFrame(channel, PeerProtocol.DESCRIPTOR);
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
        final ByteBuffer frame = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_FIELDS_LENGTH);
        frame.putInt(PeerProtocol.REQUEST_FIELDS_LENGTH).putInt(PeerProtocol.READ).putLong(sliceId).putLong(handle)
            .putLong(address).putLong(length).putLong(address).putLong(length).flip();
        FrameIo.writeFully(channel, frame);
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
        answer.getInt();
        final int type = answer.getInt();
        if (type != PeerProtocol.ACK)
        {
            throw new IOException("frame type " + type);
        }
        final long sliceId = answer.getLong();
        final int status = answer.getInt();
        answer.getInt();
        return new long[] {sliceId, status, answer.getLong()};
    }

    @Override
    public void close() throws IOException
    {
        channel.close();
    }
}
