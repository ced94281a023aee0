package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.transport.RemotePeer;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.SystemCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Everything this daemon holds towards one peer daemon ({@code host:port}): a fixed pool of connections,
 * opened on first use and re-opened after a failure, over which the slices of every request are spread
 * round-robin. Never a connection per request.
 */
public final class PeerLink implements AutoCloseable, RemotePeer
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerLink.class);

    private final String address;
    private final String host;
    private final int port;
    private final TcpTransport transport;
    private final PeerPath[] paths;
    private final int journalPeerId;
    private volatile long lastEpoch;
    private volatile boolean reachable = true;

    PeerLink(
        final String address,
        final int connectionCount,
        final TcpTransport transport,
        final LocalNics localNics,
        final List<SegmentDescriptor.Nic> peerNics)
    {
        this.address = address;
        final int colon = address.lastIndexOf(':');
        this.host = address.substring(0, colon);
        this.port = Integer.parseInt(address.substring(colon + 1));
        this.transport = transport;
        this.journalPeerId = transport.journal().nameId(address);
        if (localNics.nics().isEmpty())
        {
            this.paths = new PeerPath[] {new PeerPath(this, null, null, null, host, port, connectionCount, transport)};
        }
        else
        {
            this.paths = new PeerPath[localNics.nics().size()];
            int i = 0;
            for (final LocalNics.Nic nic : localNics.nics())
            {
                // the peer's address on this NIC's subnet, else its RPC address and let routing decide
                String remote = host;
                String remoteNic = null;
                for (final SegmentDescriptor.Nic peerNic : peerNics == null ? List.<SegmentDescriptor.Nic>of() : peerNics)
                {
                    if (nic.sameSubnet(peerNic.address()))
                    {
                        remote = peerNic.address();
                        remoteNic = peerNic.name();
                        break;
                    }
                }
                paths[i++] = new PeerPath(this, nic.name(), nic.address(), remoteNic, remote, port, connectionCount,
                    transport);
            }
        }
        LOG.info("peer {}: {} path(s) {}", address, paths.length,
            java.util.Arrays.stream(paths).map(PeerPath::description).toList());
    }

    /**
     * The path for the next slice, the one with the fewest bytes waiting among the usable paths whose local NIC
     * is preferred for the source memory's location and whose remote NIC the peer prefers for the target
     * memory's location; failing that, local preference alone; then any usable path; null when none is left.
     *
     * @param remotePreferred the peer's preferred NICs for the target memory, or null when unknown.
     * @param exclude         a path that just failed this slice, or null.
     */
    PeerPath choosePath(
        final List<String> preferredNics, final List<String> remotePreferred, final PeerPath exclude, final long nowNanos)
    {
        PeerPath best = remotePreferred == null ? null : pick(preferredNics, remotePreferred, exclude, nowNanos);
        if (best == null)
        {
            best = pick(preferredNics, null, exclude, nowNanos);
        }
        if (best == null)
        {
            best = pick(null, null, exclude, nowNanos);
        }
        if (best == null && exclude == null)
        {
            // every path is paused: probe the one whose pause ends first rather than fail without trying
            for (final PeerPath path : paths)
            {
                if (best == null || path.pausedUntilNanos() < best.pausedUntilNanos())
                {
                    best = path;
                }
            }
        }
        return best;
    }

    private PeerPath pick(
        final List<String> preferredNics, final List<String> remotePreferred, final PeerPath exclude,
        final long nowNanos)
    {
        PeerPath best = null;
        for (final PeerPath path : paths)
        {
            if (path == exclude || !path.isUsable(nowNanos) ||
                (preferredNics != null && path.localNic() != null && !preferredNics.contains(path.localNic())) ||
                (remotePreferred != null && (path.remoteNic() == null || !remotePreferred.contains(path.remoteNic()))))
            {
                continue;
            }
            if (best == null || path.queuedBytes() < best.queuedBytes())
            {
                best = path;
            }
        }
        return best;
    }

    int journalPeerId()
    {
        return journalPeerId;
    }

    public PeerPath[] paths()
    {
        return paths;
    }

    public String address()
    {
        return address;
    }

    String host()
    {
        return host;
    }

    int port()
    {
        return port;
    }

    void connected(final PeerConnection connection, final long epoch)
    {
        transport.counters().get(SystemCounter.PEER_CONNECTIONS_OUT).increment();
        if (lastEpoch != 0 && lastEpoch != epoch)
        {
            LOG.warn("peer {} restarted (epoch {} -> {}): segments opened before must be opened again",
                address, lastEpoch, epoch);
        }
        lastEpoch = epoch;
        if (!reachable)
        {
            reachable = true;
            LOG.info("peer {} reachable again", address);
        }
    }

    void connectFailed(final PeerConnection connection, final Exception cause)
    {
        transport.counters().get(SystemCounter.PEER_CONNECTION_FAILURES).increment();
        if (reachable)
        {
            reachable = false;
            LOG.warn("peer {} unreachable: {}", address, cause.toString());
        }
    }

    void lost(final PeerConnection connection, final String reason)
    {
        transport.counters().get(SystemCounter.PEER_CONNECTION_FAILURES).increment();
        LOG.warn("peer {} connection lost: {}", address, reason);
    }

    public boolean isReachable()
    {
        return reachable;
    }

    public long lastEpoch()
    {
        return lastEpoch;
    }

    @Override
    public void close()
    {
        for (final PeerPath path : paths)
        {
            path.close();
        }
    }
}
