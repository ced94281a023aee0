package io.xferd.ipc;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Framing of the control channel, the daemon's Unix stream socket {@code <dir>/xferd.sock}: every message is
 * one frame, little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |              Frame Length (this header included)              |  0
 *  +---------------------------------------------------------------+
 *  |               Message Type ({@link ControlMessages})          |  4
 *  +---------------------------------------------------------------+
 *  |                       Message Body                           ...  8
 *  +---------------------------------------------------------------+
 * </pre>
 * A file descriptor that travels with a message (SCM_RIGHTS) is attached to the frame's first byte.
 * Strings are UTF-8 with an int length before them and no terminator.
 * This class is a flyweight over one frame: wrap, then read or write fields by body offset.
 */
public final class ControlFrame
{
    public static final int FRAME_LENGTH_OFFSET = 0;
    public static final int TYPE_OFFSET = 4;
    public static final int HEADER_LENGTH = 8;
    public static final int MAX_FRAME_LENGTH = 4096;
    public static final int MAX_STRING_LENGTH = 1024;

    private MutableDirectBuffer buffer;
    private int offset;

    public ControlFrame wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Start a new frame of a type; the length grows as fields are put and is final after {@link #length()}.
     */
    public ControlFrame begin(final int type)
    {
        buffer.putInt(offset + TYPE_OFFSET, type);
        buffer.putInt(offset + FRAME_LENGTH_OFFSET, HEADER_LENGTH);
        return this;
    }

    public int type()
    {
        return buffer.getInt(offset + TYPE_OFFSET);
    }

    public int length()
    {
        return buffer.getInt(offset + FRAME_LENGTH_OFFSET);
    }

    public int getInt(final int bodyOffset)
    {
        checkRead(bodyOffset, 4);
        return buffer.getInt(offset + HEADER_LENGTH + bodyOffset);
    }

    public long getLong(final int bodyOffset)
    {
        checkRead(bodyOffset, 8);
        return buffer.getLong(offset + HEADER_LENGTH + bodyOffset);
    }

    public String getString(final int bodyOffset)
    {
        final int length = getInt(bodyOffset);
        if (length < 0 || length > MAX_STRING_LENGTH)
        {
            throw new MalformedFrameException("string length " + length + " at body offset " + bodyOffset);
        }
        checkRead(bodyOffset + 4, length);
        return buffer.getStringWithoutLengthUtf8(offset + HEADER_LENGTH + bodyOffset + 4, length);
    }

    /**
     * Copy {@code destination.length} bytes of a fixed-width field into {@code destination}.
     */
    public void getBytes(final int bodyOffset, final byte[] destination)
    {
        checkRead(bodyOffset, destination.length);
        buffer.getBytes(offset + HEADER_LENGTH + bodyOffset, destination);
    }

    public ControlFrame putBytes(final int bodyOffset, final byte[] source)
    {
        grow(bodyOffset + source.length);
        buffer.putBytes(offset + HEADER_LENGTH + bodyOffset, source);
        return this;
    }

    public ControlFrame putInt(final int bodyOffset, final int value)
    {
        buffer.putInt(offset + HEADER_LENGTH + bodyOffset, value);
        grow(bodyOffset + 4);
        return this;
    }

    public ControlFrame putLong(final int bodyOffset, final long value)
    {
        buffer.putLong(offset + HEADER_LENGTH + bodyOffset, value);
        grow(bodyOffset + 8);
        return this;
    }

    public ControlFrame putString(final int bodyOffset, final String value)
    {
        final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_LENGTH)
        {
            throw new IllegalArgumentException("string longer than " + MAX_STRING_LENGTH + " bytes");
        }
        buffer.putInt(offset + HEADER_LENGTH + bodyOffset, bytes.length);
        buffer.putBytes(offset + HEADER_LENGTH + bodyOffset + 4, bytes);
        grow(bodyOffset + 4 + bytes.length);
        return this;
    }

    public DirectBuffer buffer()
    {
        return buffer;
    }

    /**
     * Length of the frame starting at {@code offset} when at least {@link #HEADER_LENGTH} bytes are
     * available, checked against the limits.
     *
     * @throws MalformedFrameException when the declared length is impossible.
     */
    public static int frameLength(final DirectBuffer buffer, final int offset)
    {
        final int length = buffer.getInt(offset + FRAME_LENGTH_OFFSET);
        if (length < HEADER_LENGTH || length > MAX_FRAME_LENGTH)
        {
            throw new MalformedFrameException("frame length " + length + " outside [" + HEADER_LENGTH + ", " +
                MAX_FRAME_LENGTH + "]");
        }
        return length;
    }

    private void grow(final int bodyEnd)
    {
        final int end = HEADER_LENGTH + bodyEnd;
        if (end > MAX_FRAME_LENGTH)
        {
            throw new IllegalArgumentException("frame longer than " + MAX_FRAME_LENGTH);
        }
        if (end > length())
        {
            buffer.putInt(offset + FRAME_LENGTH_OFFSET, end);
        }
    }

    private void checkRead(final int bodyOffset, final int size)
    {
        if (bodyOffset < 0 || HEADER_LENGTH + bodyOffset + size > length())
        {
            throw new MalformedFrameException("field at body offset " + bodyOffset + " (+" + size +
                ") beyond frame length " + length() + " of message type " + type());
        }
    }
}
