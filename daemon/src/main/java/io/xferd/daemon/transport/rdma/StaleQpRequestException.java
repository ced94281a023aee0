package io.xferd.daemon.transport.rdma;

/**
 * A CONNECT_QP from a requester whose epoch is older than one already seen from the same rpc address: a request
 * from a previous life of that daemon, delayed or replayed. It is refused and the requester's current QPs stay.
 */
public final class StaleQpRequestException extends RdmaConnectException
{
    public StaleQpRequestException(final String message)
    {
        super(message);
    }
}
