package io.xferd.daemon.transport.rdma;

/**
 * A CONNECT_QP or QP_ANSWER body that does not decode: truncated, a count or name out of range, trailing bytes.
 */
public final class MalformedQpFrameException extends RdmaConnectException
{
    public MalformedQpFrameException(final String message)
    {
        super(message);
    }
}
