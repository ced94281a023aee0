package io.xferd.daemon.peer;

import io.xferd.ipc.SystemCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Everything this daemon holds towards one peer daemon ({@code host:port}): a fixed pool of connections,
 * opened on first use and re-opened after a failure, over which the slices of every request are spread
 * round-robin. Never a connection per request.
 */
public final class PeerLink implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerLink.class);

    private final String address;
    private final String host;
    private final int port;
    private final TcpTransport transport;
    private final PeerConnection[] connections;
    private final AtomicInteger nextConnection = new AtomicInteger();
    private volatile long lastEpoch;
    private volatile boolean reachable = true;

    PeerLink(final String address, final int connectionCount, final TcpTransport transport)
    {
        this.address = address;
        final int colon = address.lastIndexOf(':');
        this.host = address.substring(0, colon);
        this.port = Integer.parseInt(address.substring(colon + 1));
        this.transport = transport;
        this.connections = new PeerConnection[connectionCount];
        for (int i = 0; i < connectionCount; i++)
        {
            connections[i] = new PeerConnection(this, i, transport);
        }
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

    PeerConnection nextConnection()
    {
        return connections[(nextConnection.getAndIncrement() & Integer.MAX_VALUE) % connections.length];
    }

    PeerConnection[] connections()
    {
        return connections;
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
        for (final PeerConnection connection : connections)
        {
            connection.close();
        }
    }
}
