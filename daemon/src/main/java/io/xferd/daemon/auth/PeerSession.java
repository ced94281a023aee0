package io.xferd.daemon.auth;

/**
 * What a completed handshake gives a connection: the other daemon's epoch and the tag keys of both directions.
 */
public final class PeerSession
{
    private final long peerEpoch;
    private final FrameMac out;
    private final FrameMac in;

    PeerSession(final long peerEpoch, final FrameMac out, final FrameMac in)
    {
        this.peerEpoch = peerEpoch;
        this.out = out;
        this.in = in;
    }

    /**
     * @return the epoch of the daemon at the other end.
     */
    public long peerEpoch()
    {
        return peerEpoch;
    }

    /**
     * @return the tags of frames this side sends (the sending thread's).
     */
    public FrameMac out()
    {
        return out;
    }

    /**
     * @return the checks of frames this side receives (the receiving thread's).
     */
    public FrameMac in()
    {
        return in;
    }
}
