package io.xferd.daemon.peer;

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

    /** Control path: send one frame with a body. */
    static void sendFrame(final SocketChannel channel, final int type, final byte[] body) throws IOException
    {
        final ByteBuffer frame = newBuffer(PeerProtocol.HEADER_LENGTH + body.length);
        frame.putInt(body.length).putInt(type).put(body).flip();
        writeFully(channel, frame);
    }

    /** Control path: receive one frame, checking its type; a REFUSE becomes a {@link PeerRefusedException}. */
    static ByteBuffer receiveFrame(final SocketChannel channel, final int expectedType) throws IOException
    {
        final ByteBuffer header = newBuffer(PeerProtocol.HEADER_LENGTH);
        readFully(channel, header);
        header.flip();
        final int length = header.getInt();
        final int type = header.getInt();
        if (length < 0 || length > PeerProtocol.MAX_CONTROL_BODY)
        {
            throw new IOException("peer sent a control frame of " + length + " bytes");
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

    static String utf8(final ByteBuffer buffer)
    {
        final byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
