package io.xferd.daemon.transport.rdma;

/**
 * Connecting queue pairs to a peer failed: the peer refused, a frame was malformed, or a QP could not reach RTS.
 * The message says which and with whom.
 */
public class RdmaConnectException extends RuntimeException
{
    public RdmaConnectException(final String message)
    {
        super(message);
    }

    public RdmaConnectException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
