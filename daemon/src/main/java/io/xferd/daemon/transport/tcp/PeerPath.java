package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One way to a peer: a local NIC (or the OS's choice) to one of the peer's addresses, with its own pooled
 * connections and health. Slices go to the path with the fewest bytes waiting, so a slower NIC takes fewer;
 * a path whose connection breaks is paused with a growing back-off and is tried again when the pause ends.
 * Its bytes, failures and state are counters in the cnc file, for {@code xferd status} and the metrics.
 */
public final class PeerPath implements AutoCloseable
{
    public static final int BYTES_TYPE_ID = 2;
    public static final int FAILURES_TYPE_ID = 3;
    public static final int STATE_TYPE_ID = 4;
    public static final long ACTIVE = 0;
    public static final long PAUSED = 1;

    private static final Logger LOG = LoggerFactory.getLogger(PeerPath.class);

    private final String localNic;
    private final String remoteNic;
    private final String bindAddress;
    private final String remoteHost;
    private final int remotePort;
    private final String description;
    private final int journalNicId;
    private final PeerConnection[] connections;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final FlowSpread spread = new FlowSpread();
    private final AtomicCounter bytes;
    private final AtomicCounter failures;
    private final AtomicCounter state;
    private final PathPause pause = new PathPause();
    private final NanoClock clock;

    PeerPath(
        final PeerLink link,
        final String localNic,
        final String bindAddress,
        final String remoteNic,
        final String remoteHost,
        final int remotePort,
        final int connectionCount,
        final TcpTransport transport)
    {
        this.clock = transport.clock();
        this.localNic = localNic;
        this.remoteNic = remoteNic;
        this.bindAddress = bindAddress;
        this.remoteHost = remoteHost;
        this.remotePort = remotePort;
        this.description = (localNic == null ? "default route" : localNic) + " -> " + remoteHost + ":" + remotePort;
        this.journalNicId = transport.journal().nameId(localNic == null ? "tcp" : localNic);
        final SystemCounters counters = transport.counters();
        final String label = "path " + description + " (peer " + link.address() + ")";
        this.bytes = counters.newCounter(label + " bytes", BYTES_TYPE_ID);
        this.failures = counters.newCounter(label + " failures", FAILURES_TYPE_ID);
        this.state = counters.newCounter(label + " state (0 active, 1 paused)", STATE_TYPE_ID);
        this.connections = new PeerConnection[connectionCount];
        for (int i = 0; i < connectionCount; i++)
        {
            connections[i] = new PeerConnection(link, this, i, transport);
        }
    }

    public String localNic()
    {
        return localNic;
    }

    /**
     * @return the peer's NIC this path ends on, or null when the OS routes to the peer's RPC address.
     */
    public String remoteNic()
    {
        return remoteNic;
    }

    String bindAddress()
    {
        return bindAddress;
    }

    String remoteHost()
    {
        return remoteHost;
    }

    int remotePort()
    {
        return remotePort;
    }

    /**
     * @return the connection the next slice of this flow goes to: each flow's slices take the connections in turn.
     */
    PeerConnection connectionFor(final int slot, final long traceId)
    {
        return connections[spread.next(slot, traceId, connections.length)];
    }

    PeerConnection[] connections()
    {
        return connections;
    }

    /**
     * @return true unless paused and the pause has not ended (an ended pause lets the next slice probe it).
     */
    boolean isUsable(final long nowNanos)
    {
        return pause.isOver(nowNanos);
    }

    long pausedUntilNanos()
    {
        return pause.pausedUntilNs();
    }

    long queuedBytes()
    {
        return queuedBytes.get();
    }

    void queued(final long length)
    {
        queuedBytes.getAndAdd(length);
    }

    void answered(final long length, final boolean ok)
    {
        queuedBytes.getAndAdd(-length);
        if (ok)
        {
            bytes.getAndAdd(length);
            if (state.get() != ACTIVE)
            {
                synchronized (this)
                {
                    if (state.get() != ACTIVE)
                    {
                        state.set(ACTIVE);
                        pause.resumed();
                        LOG.info("path {} active again", description);
                    }
                }
            }
        }
    }

    /**
     * The path's connection broke or timed out: pause it so new slices take other paths.
     */
    synchronized void failed(final String reason)
    {
        failures.increment();
        final long pausedNanos = pause.failed(clock.nanoTime());
        if (pausedNanos == 0)
        {
            return;
        }
        LOG.warn("path {} paused for {} ms: {}", description, pausedNanos / 1_000_000, reason);
        state.set(PAUSED);
    }

    int journalNicId()
    {
        return journalNicId;
    }

    public String description()
    {
        return description;
    }

    public long bytes()
    {
        return bytes.get();
    }

    public long failures()
    {
        return failures.get();
    }

    public boolean isPaused()
    {
        return state.get() == PAUSED;
    }

    @Override
    public void close()
    {
        for (final PeerConnection connection : connections)
        {
            connection.close();
        }
        bytes.close();
        failures.close();
        state.close();
    }
}
