package io.xferd.daemon.transport.tcp;

import org.slf4j.Logger;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many peer connections the RPC port serves at once, and how many of them may be in the handshake (not yet
 * authenticated): a connection over either cap is closed as soon as it is accepted, so a flood of connections
 * costs neither threads nor buffers. Any thread.
 */
final class PeerConnectionLimits
{
    private static final long REFUSAL_LOG_INTERVAL_NS = 10_000_000_000L;

    private final int maxConnections;
    private final int maxHandshakes;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    private volatile long lastRefusalLogNanos;

    PeerConnectionLimits(final int maxConnections)
    {
        this.maxConnections = maxConnections;
        this.maxHandshakes = Math.max(4, maxConnections / 8);
    }

    /**
     * Take a connection slot and a handshake slot.
     *
     * @return false, taking neither, when either cap is reached.
     */
    boolean tryAdmit()
    {
        if (!tryIncrement(handshakes, maxHandshakes))
        {
            return false;
        }
        if (!tryIncrement(connections, maxConnections))
        {
            handshakes.decrementAndGet();
            return false;
        }
        return true;
    }

    void handshakeEnded()
    {
        handshakes.decrementAndGet();
    }

    void closed()
    {
        connections.decrementAndGet();
    }

    int connections()
    {
        return connections.get();
    }

    int handshakes()
    {
        return handshakes.get();
    }

    int maxHandshakes()
    {
        return maxHandshakes;
    }

    long refused()
    {
        return refused.get();
    }

    /**
     * Count a refused connection; log at most one WARN per 10 s on the server's clock ({@code nowNanos}), with the
     * count, so that a flood cannot fill the log.
     */
    void refusedOne(final Logger log, final long nowNanos)
    {
        final long count = refused.incrementAndGet();
        if (lastRefusalLogNanos == 0 || nowNanos - lastRefusalLogNanos > REFUSAL_LOG_INTERVAL_NS)
        {
            lastRefusalLogNanos = nowNanos;
            log.warn("peer connections over the limit ({} at once, {} in the handshake): closing new ones at once " +
                "({} refused so far)", maxConnections, maxHandshakes, count);
        }
    }

    private static boolean tryIncrement(final AtomicInteger value, final int max)
    {
        while (true)
        {
            final int current = value.get();
            if (current >= max)
            {
                return false;
            }
            if (value.compareAndSet(current, current + 1))
            {
                return true;
            }
        }
    }
}
