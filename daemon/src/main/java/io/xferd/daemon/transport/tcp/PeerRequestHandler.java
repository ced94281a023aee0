package io.xferd.daemon.transport.tcp;

/**
 * Answers one kind of control request on the RPC port that a transport adds (e.g. the RDMA transport's
 * CONNECT_QP). Called on the connection's thread; may allocate and block briefly.
 */
@FunctionalInterface
public interface PeerRequestHandler
{
    /**
     * @return the answer's body.
     * @throws RuntimeException whose message goes back to the requester in a REFUSE frame.
     */
    byte[] answer(byte[] request);
}
