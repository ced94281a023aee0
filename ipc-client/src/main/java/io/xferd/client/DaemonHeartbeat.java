package io.xferd.client;

import io.xferd.ipc.CncFileDescriptor;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;

/**
 * Reads the daemon's heartbeat in cnc.dat (written at least every 100 ms while the daemon runs) against the
 * liveness timeout the daemon published there: a heartbeat older than that means the daemon is hung or gone, even
 * when its socket still looks open. The clock is injected so that tests can age the heartbeat without waiting.
 */
final class DaemonHeartbeat
{
    private final AtomicBuffer cnc;
    private final EpochClock clock;
    private final long timeoutMs;

    DaemonHeartbeat(final AtomicBuffer cnc, final EpochClock clock, final long timeoutMs)
    {
        this.cnc = cnc;
        this.clock = clock;
        this.timeoutMs = timeoutMs;
    }

    /**
     * @return why the daemon counts as gone, or null while its heartbeat is within the timeout.
     */
    String staleReason()
    {
        final long age = clock.time() - CncFileDescriptor.heartbeatMs(cnc);
        return age > timeoutMs ? "daemon heartbeat is " + age + " ms old (timeout " + timeoutMs + " ms)" : null;
    }
}
