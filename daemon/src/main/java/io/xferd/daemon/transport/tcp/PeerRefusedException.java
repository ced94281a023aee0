package io.xferd.daemon.transport.tcp;

import java.io.IOException;

/**
 * A peer refused the handshake (wrong cluster token, version) or a request on the control path.
 */
public final class PeerRefusedException extends IOException
{
    private static final long serialVersionUID = 1L;

    public PeerRefusedException(final String message)
    {
        super(message);
    }
}
