package io.xferd.daemon.auth;

import io.xferd.daemon.transport.PeerProtocol;

import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Tags the frames of one direction of one connection: HMAC-SHA256 (RFC 2104) under the direction's session key,
 * truncated to {@link PeerProtocol#TAG_LENGTH} bytes, over the frame's sequence number, its header and the bytes
 * the caller adds. Built on {@link MessageDigest} with the pads computed once, so that a tag allocates nothing
 * ({@code javax.crypto.Mac#doFinal} returns a fresh array per call); the test checks it against
 * {@code javax.crypto.Mac}. One thread at a time: the connection's sender, or its receiver.
 */
public final class FrameMac
{
    private static final int BLOCK_LENGTH = 64;
    private static final int DIGEST_LENGTH = 32;

    private final MessageDigest digest;
    private final byte[] innerPad = new byte[BLOCK_LENGTH];
    private final byte[] outerPad = new byte[BLOCK_LENGTH];
    private final byte[] prefix = new byte[16];
    private final byte[] inner = new byte[DIGEST_LENGTH];
    private final byte[] tag = new byte[DIGEST_LENGTH];
    private long sequence;

    /**
     * @param key the session key of this direction (at most 64 bytes), or null: no authentication, tags are zeros
     *            and are not checked.
     */
    public FrameMac(final byte[] key)
    {
        if (key == null)
        {
            digest = null;
            return;
        }
        if (key.length > BLOCK_LENGTH)
        {
            throw new IllegalArgumentException("session key longer than one block: " + key.length);
        }
        try
        {
            digest = MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 unavailable", ex);
        }
        for (int i = 0; i < BLOCK_LENGTH; i++)
        {
            final byte k = i < key.length ? key[i] : 0;
            innerPad[i] = (byte)(k ^ 0x36);
            outerPad[i] = (byte)(k ^ 0x5c);
        }
    }

    public boolean authenticates()
    {
        return digest != null;
    }

    /**
     * Begin the tag of the next frame (its sequence number is taken now).
     */
    public void start(final int bodyLength, final int type)
    {
        final long number = sequence++;
        if (digest == null)
        {
            return;
        }
        for (int i = 0; i < 8; i++)
        {
            prefix[i] = (byte)(number >>> (8 * i));
        }
        for (int i = 0; i < 4; i++)
        {
            prefix[8 + i] = (byte)(bodyLength >>> (8 * i));
            prefix[12 + i] = (byte)(type >>> (8 * i));
        }
        digest.reset();
        digest.update(innerPad);
        digest.update(prefix);
    }

    /**
     * Add {@code buffer}'s bytes {@code [from, to)}; its position and limit are left as they were.
     */
    public void update(final ByteBuffer buffer, final int from, final int to)
    {
        if (digest == null)
        {
            return;
        }
        final int position = buffer.position();
        final int limit = buffer.limit();
        buffer.limit(to);
        buffer.position(from);
        digest.update(buffer);
        buffer.limit(limit);
        buffer.position(position);
    }

    public void update(final byte[] bytes, final int offset, final int length)
    {
        if (digest != null)
        {
            digest.update(bytes, offset, length);
        }
    }

    /**
     * Finish the tag and write it at {@code buffer[index, index + TAG_LENGTH)} (zeros without authentication).
     */
    public void finishInto(final ByteBuffer buffer, final int index)
    {
        compute();
        for (int i = 0; i < PeerProtocol.TAG_LENGTH; i++)
        {
            buffer.put(index + i, tag[i]);
        }
    }

    /**
     * Finish the tag and compare it, in constant time, with the one at {@code buffer[index, index + TAG_LENGTH)}.
     *
     * @return true when they are equal, or without authentication.
     */
    public boolean finishAndCheck(final ByteBuffer buffer, final int index)
    {
        if (digest == null)
        {
            return true;
        }
        compute();
        int difference = 0;
        for (int i = 0; i < PeerProtocol.TAG_LENGTH; i++)
        {
            difference |= tag[i] ^ buffer.get(index + i);
        }
        return difference == 0;
    }

    /**
     * Tag the bytes {@code [from, to)} of {@code buffer} as the fixed part of a frame; the tag goes at {@code to}.
     */
    public void sign(final int bodyLength, final int type, final ByteBuffer buffer, final int from, final int to)
    {
        start(bodyLength, type);
        update(buffer, from, to);
        finishInto(buffer, to);
    }

    /**
     * Check the tag at {@code to} of the fixed part {@code [from, to)} of a received frame.
     */
    public boolean verify(final int bodyLength, final int type, final ByteBuffer buffer, final int from, final int to)
    {
        start(bodyLength, type);
        update(buffer, from, to);
        return finishAndCheck(buffer, to);
    }

    private void compute()
    {
        if (digest == null)
        {
            java.util.Arrays.fill(tag, (byte)0);
            return;
        }
        try
        {
            digest.digest(inner, 0, DIGEST_LENGTH);
            digest.update(outerPad);
            digest.update(inner);
            digest.digest(tag, 0, DIGEST_LENGTH);
        }
        catch (final DigestException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
