package io.xferd.daemon.session;

/**
 * The per-segment RPC ports of HELLO's LISTEN flag (Mooncake's {@code get_rpc_port}): a TCP listener bound for one
 * segment for as long as its client is connected. Implemented by the peer side; the conductor only asks for a port
 * before WELCOME and gives it back at disconnect. Conductor thread only.
 */
public interface SegmentPorts
{
    /** No per-segment ports: LISTEN is answered with port 0. */
    SegmentPorts NONE = new SegmentPorts()
    {
        public int open(final ClientSession session)
        {
            return 0;
        }

        public void close(final ClientSession session)
        {
        }
    };

    /**
     * Bind a listener for this segment.
     *
     * @return its port, or 0 when this daemon has none to give.
     * @throws RegistrationRefusedException when it cannot be bound (the HELLO is refused with its code).
     */
    int open(ClientSession session);

    /**
     * Close the segment's listener, if it has one.
     */
    void close(ClientSession session);

    /**
     * @return the segment whose own port {@code address} is, when that port is one of this daemon's and the host
     * names this daemon (without a DNS lookup); else null, and the session is opened through the network.
     */
    default ClientSession localSegment(final io.xferd.daemon.session.SessionAddress address)
    {
        return null;
    }
}
