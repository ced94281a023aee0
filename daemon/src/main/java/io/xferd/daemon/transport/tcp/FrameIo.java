package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.transport.PeerProtocol;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Blocking reads and writes of whole frames and fields on a peer connection. Control-path helpers allocate;
 * the data path reuses the caller's buffers.
 */
final class FrameIo
{
    private FrameIo()
    {
    }

    static ByteBuffer newBuffer(final int capacity)
    {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    static void readFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer) < 0)
            {
                throw new EOFException("peer closed the connection");
            }
        }
    }

    static void writeFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }

    static void writeFully(final SocketChannel channel, final ByteBuffer[] buffers) throws IOException
    {
        long remaining = 0;
        for (final ByteBuffer buffer : buffers)
        {
            remaining += buffer.remaining();
        }
        while (remaining > 0)
        {
            remaining -= channel.write(buffers);
        }
    }

    /**
     * Drop {@code length} bytes of the stream (the payload of a refused WRITE).
     */
    static void skip(final SocketChannel channel, final ByteBuffer scratch, final long length) throws IOException
    {
        long left = length;
        while (left > 0)
        {
            scratch.clear().limit((int)Math.min(scratch.capacity(), left));
            readFully(channel, scratch);
            left -= scratch.limit();
        }
    }

    /** Handshake: send one frame with a body and no tag. */
    static void sendFrame(final SocketChannel channel, final int type, final byte[] body) throws IOException
    {
        final ByteBuffer frame = newBuffer(PeerProtocol.HEADER_LENGTH + body.length);
        frame.putInt(body.length).putInt(type).put(body).flip();
        writeFully(channel, frame);
    }

    /** Control path after the handshake: send one frame, its body followed by its tag. */
    static void sendFrame(final SocketChannel channel, final FrameMac mac, final int type, final byte[] body)
        throws IOException
    {
        final int length = body.length + PeerProtocol.TAG_LENGTH;
        final ByteBuffer frame = newBuffer(PeerProtocol.HEADER_LENGTH + length);
        frame.putInt(length).putInt(type).put(body);
        mac.sign(length, type, frame, PeerProtocol.HEADER_LENGTH, PeerProtocol.HEADER_LENGTH + body.length);
        frame.position(0).limit(frame.capacity());
        writeFully(channel, frame);
    }

    /**
     * Handshake: receive one frame of at most {@code maxLength} body bytes, checking its type; a REFUSE becomes a
     * {@link PeerRefusedException}. Nothing longer is allocated.
     */
    static ByteBuffer receiveFrame(final SocketChannel channel, final int expectedType, final int maxLength)
        throws IOException
    {
        final ByteBuffer header = newBuffer(PeerProtocol.HEADER_LENGTH);
        readFully(channel, header);
        header.flip();
        final int length = header.getInt();
        final int type = header.getInt();
        if (length < 0 || length > maxLength)
        {
            throw new IOException("peer sent a frame of " + length + " bytes in the handshake (at most " +
                maxLength + ")");
        }
        final ByteBuffer body = newBuffer(length);
        readFully(channel, body);
        body.flip();
        if (type == PeerProtocol.REFUSE)
        {
            throw new PeerRefusedException("peer refused: " + utf8(body));
        }
        if (type != expectedType)
        {
            throw new IOException("peer sent frame type " + type + ", expected " + expectedType);
        }
        return body;
    }

    /**
     * Control path after the handshake: receive one frame, check its tag, then its type; a REFUSE becomes a
     * {@link PeerRefusedException}.
     *
     * @return the body without its tag.
     * @throws FrameAuthenticationException when the tag is wrong (the caller closes the connection).
     */
    static ByteBuffer receiveFrame(final SocketChannel channel, final FrameMac mac, final int expectedType)
        throws IOException
    {
        final ByteBuffer header = newBuffer(PeerProtocol.HEADER_LENGTH);
        readFully(channel, header);
        header.flip();
        final int length = header.getInt();
        final int type = header.getInt();
        if (length < PeerProtocol.TAG_LENGTH || length > PeerProtocol.MAX_CONTROL_BODY)
        {
            throw new IOException("peer sent a control frame of " + length + " bytes");
        }
        final ByteBuffer body = newBuffer(length);
        readFully(channel, body);
        final int end = length - PeerProtocol.TAG_LENGTH;
        if (!mac.verify(length, type, body, 0, end))
        {
            throw new FrameAuthenticationException(type);
        }
        body.position(0).limit(end);
        if (type == PeerProtocol.REFUSE)
        {
            throw new PeerRefusedException("peer refused: " + utf8(body));
        }
        if (type != expectedType)
        {
            throw new IOException("peer sent frame type " + type + ", expected " + expectedType);
        }
        return body;
    }

    static String utf8(final ByteBuffer buffer)
    {
        final byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
