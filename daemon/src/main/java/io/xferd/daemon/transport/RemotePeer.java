package io.xferd.daemon.transport;

/**
 * The daemon at the other end of a {@link RemoteSegment}, as the transport abstraction sees it. Each transport
 * knows its own kind of peer (TCP's is a {@code transport.tcp.PeerLink}); the abstraction needs no more than this,
 * so that it does not depend on any one transport.
 */
public interface RemotePeer
{
    /**
     * @return the peer's RPC address, "host:port".
     */
    String address();

    /**
     * @return whether a path to the peer is connected now.
     */
    boolean isReachable();
}
