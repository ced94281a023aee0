package io.xferd.client;

import io.xferd.ipc.CncFileDescriptor;
import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;

/**
 * Reads the daemon's heartbeat in cnc.dat (written at least every quarter of the liveness timeout while the daemon runs) against the
 * liveness timeout the daemon published there: a heartbeat older than that means the daemon is hung or gone, even
 * when its socket still looks open. The clock is injected so that tests can age the heartbeat without waiting.
 */
final class DaemonHeartbeat implements AutoCloseable
{
    private final AtomicBuffer cnc;
    private final EpochClock clock;
    private final long timeoutMs;
    private final MappedByteBuffer mapping;

    DaemonHeartbeat(final AtomicBuffer cnc, final EpochClock clock, final long timeoutMs)
    {
        this(cnc, clock, timeoutMs, null);
    }

    private DaemonHeartbeat(
        final AtomicBuffer cnc, final EpochClock clock, final long timeoutMs, final MappedByteBuffer mapping)
    {
        this.cnc = cnc;
        this.clock = clock;
        this.timeoutMs = timeoutMs;
        this.mapping = mapping;
    }

    /**
     * Map the daemon's cnc.dat, check its header, and judge its heartbeat by the timeout the daemon wrote there.
     */
    static DaemonHeartbeat map(final Path cncFile, final EpochClock clock)
    {
        final MappedByteBuffer mapping = IoUtil.mapExistingFile(cncFile.toFile(), "xferd cnc");
        try
        {
            final UnsafeBuffer cnc = new UnsafeBuffer(mapping);
            CncFileDescriptor.checkHeader(cnc);
            return new DaemonHeartbeat(cnc, clock, CncFileDescriptor.livenessTimeoutMs(cnc), mapping);
        }
        catch (final RuntimeException ex)
        {
            IoUtil.unmap(mapping);
            throw ex;
        }
    }

    /**
     * @return why the daemon counts as gone, or null while its heartbeat is within the timeout.
     */
    String staleReason()
    {
        final long age = clock.time() - CncFileDescriptor.heartbeatMs(cnc);
        return age > timeoutMs ? "daemon heartbeat is " + age + " ms old (timeout " + timeoutMs + " ms)" : null;
    }

    @Override
    public void close()
    {
        if (mapping != null)
        {
            IoUtil.unmap(mapping);
        }
    }
}
