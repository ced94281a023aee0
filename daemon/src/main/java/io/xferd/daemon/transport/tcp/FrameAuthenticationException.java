package io.xferd.daemon.transport.tcp;

import java.io.IOException;

/**
 * A frame whose tag does not match: forged, altered, replayed or out of order. The connection is closed.
 */
final class FrameAuthenticationException extends IOException
{
    private static final long serialVersionUID = 1L;

    FrameAuthenticationException(final int type)
    {
        super("frame of type " + type + " failed authentication (forged, altered or out of order): connection closed");
    }
}
