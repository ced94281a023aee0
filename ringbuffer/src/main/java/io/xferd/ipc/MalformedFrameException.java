package io.xferd.ipc;

/**
 * A control frame or ring record that does not follow the protocol; the peer that sent it is disconnected.
 */
public final class MalformedFrameException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public MalformedFrameException(final String message)
    {
        super(message);
    }
}
