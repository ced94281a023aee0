package io.xferd.daemon.peer;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A blocking socket with an input buffer and an output buffer, so that many small frames (headers, answers)
 * cost one system call instead of one each: reads take whatever the socket has, answers wait in the output
 * buffer until the reader would block, and only then go out together. Large payloads bypass both buffers:
 * what is already buffered is copied, the rest is read or written straight from or into registered memory.
 * One reader thread and one writer thread at most.
 */
final class BufferedChannel
{
    private final SocketChannel channel;
    private final ByteBuffer in;
    private final ByteBuffer out;
    private final ByteBuffer[] outWithPayload = new ByteBuffer[2];

    BufferedChannel(final SocketChannel channel, final int inputCapacity, final int outputCapacity)
    {
        this.channel = channel;
        this.in = FrameIo.newBuffer(inputCapacity);
        this.in.flip();
        this.out = outputCapacity > 0 ? FrameIo.newBuffer(outputCapacity) : null;
    }

    /**
     * Make {@code length} bytes readable from {@link #input()} (relative gets), reading more only when needed;
     * answers waiting in the output buffer are sent before blocking.
     */
    ByteBuffer require(final int length) throws IOException
    {
        if (in.remaining() < length)
        {
            in.compact();
            while (in.position() < length)
            {
                flush();
                if (channel.read(in) < 0)
                {
                    throw new EOFException("peer closed the connection");
                }
            }
            in.flip();
        }
        return in;
    }

    ByteBuffer input()
    {
        return in;
    }

    /**
     * Fill {@code target} (a view of registered memory): buffered bytes first, then straight from the socket.
     */
    void readFully(final ByteBuffer target) throws IOException
    {
        final int buffered = Math.min(in.remaining(), target.remaining());
        if (buffered > 0)
        {
            final int limit = in.limit();
            in.limit(in.position() + buffered);
            target.put(in);
            in.limit(limit);
        }
        if (target.hasRemaining())
        {
            flush();
            FrameIo.readFully(channel, target);
        }
    }

    void skip(final long length) throws IOException
    {
        long left = length;
        while (left > 0)
        {
            final ByteBuffer buffer = require((int)Math.min(left, in.capacity()));
            final int n = (int)Math.min(left, buffer.remaining());
            buffer.position(buffer.position() + n);
            left -= n;
        }
    }

    /**
     * Room for a small frame in the output buffer, flushing first when it is full.
     */
    ByteBuffer output(final int length) throws IOException
    {
        if (out.remaining() < length)
        {
            flush();
        }
        return out;
    }

    /**
     * Send what waits in the output buffer, then {@code payload}, in one gathering write.
     */
    void writeWithPayload(final ByteBuffer payload) throws IOException
    {
        out.flip();
        outWithPayload[0] = out;
        outWithPayload[1] = payload;
        try
        {
            FrameIo.writeFully(channel, outWithPayload);
        }
        finally
        {
            outWithPayload[1] = null;
            out.clear();
        }
    }

    void flush() throws IOException
    {
        if (out != null && out.position() > 0)
        {
            out.flip();
            FrameIo.writeFully(channel, out);
            out.clear();
        }
    }
}
