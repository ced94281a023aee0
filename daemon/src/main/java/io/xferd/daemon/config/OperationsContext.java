package io.xferd.daemon.config;

import io.xferd.daemon.journal.queue.JournalQueues;
import org.agrona.BitUtil;

import java.nio.file.Path;
import java.util.Map;

/**
 * The operator-facing settings of the daemon, part of {@link DaemonContext} ({@link DaemonContext#operations()}):
 * the transfer journal, the Prometheus endpoint and slow-request logging.
 */
public final class OperationsContext
{
    public static final String DEFAULT_METRICS_ADDRESS = "127.0.0.1:9464";
    public static final String METRICS_OFF = "off";

    private boolean journalEnabled = true;
    private Path journalDirectory;
    private String journalRollCycle = "FAST_HOURLY";
    private int journalRetentionCycles = 24;
    private int journalRingCapacity = 2 * 1024 * 1024;
    private long slowRequestMs = 100;
    private String metricsAddress = DEFAULT_METRICS_ADDRESS;

    void conclude(final DaemonContext daemon)
    {
        if (journalDirectory == null)
        {
            journalDirectory = daemon.directory().resolve("journal");
        }
        JournalQueues.rollCycle(journalRollCycle);
        if (journalRetentionCycles < 0)
        {
            throw new IllegalArgumentException("journal retention cycles must be >= 0 (0 keeps all): " +
                journalRetentionCycles);
        }
        if (journalRingCapacity <= 0 || !BitUtil.isPowerOfTwo(journalRingCapacity))
        {
            throw new IllegalArgumentException("journal ring capacity must be a power of two: " + journalRingCapacity);
        }
        if (!isMetricsOff())
        {
            MetricsAddress.parse(metricsAddress);
        }
    }

    void describe(final Map<String, Object> map)
    {
        map.put("journal", journalEnabled);
        map.put("journal_dir", String.valueOf(journalDirectory));
        map.put("journal_roll_cycle", journalRollCycle);
        map.put("journal_retention_cycles", journalRetentionCycles);
        map.put("slow_request_ms", slowRequestMs);
        map.put("metrics_address", metricsAddress);
    }

    public boolean isMetricsOff()
    {
        return metricsAddress == null || METRICS_OFF.equalsIgnoreCase(metricsAddress);
    }

    public boolean journalEnabled()
    {
        return journalEnabled;
    }

    public OperationsContext journalEnabled(final boolean value)
    {
        journalEnabled = value;
        return this;
    }

    public Path journalDirectory()
    {
        return journalDirectory;
    }

    public OperationsContext journalDirectory(final Path value)
    {
        journalDirectory = value;
        return this;
    }

    public String journalRollCycle()
    {
        return journalRollCycle;
    }

    public OperationsContext journalRollCycle(final String value)
    {
        journalRollCycle = value;
        return this;
    }

    public int journalRetentionCycles()
    {
        return journalRetentionCycles;
    }

    public OperationsContext journalRetentionCycles(final int value)
    {
        journalRetentionCycles = value;
        return this;
    }

    public int journalRingCapacity()
    {
        return journalRingCapacity;
    }

    public OperationsContext journalRingCapacity(final int value)
    {
        journalRingCapacity = value;
        return this;
    }

    public long slowRequestMs()
    {
        return slowRequestMs;
    }

    public OperationsContext slowRequestMs(final long value)
    {
        slowRequestMs = value;
        return this;
    }

    public String metricsAddress()
    {
        return metricsAddress;
    }

    /**
     * @param value {@code host:port} (port 0 picks a free one), or "off".
     */
    public OperationsContext metricsAddress(final String value)
    {
        metricsAddress = value;
        return this;
    }

    /**
     * A parsed {@code host:port}.
     */
    public record MetricsAddress(String host, int port)
    {
        public static MetricsAddress parse(final String text)
        {
            final int colon = text.lastIndexOf(':');
            if (colon <= 0 || colon == text.length() - 1)
            {
                throw new IllegalArgumentException("metrics address must be host:port or off: " + text);
            }
            final String host = text.substring(0, colon).replace("[", "").replace("]", "");
            final int port;
            try
            {
                port = Integer.parseInt(text.substring(colon + 1));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("metrics address must be host:port or off: " + text);
            }
            if (port < 0 || port > 65535)
            {
                throw new IllegalArgumentException("metrics port must be 0..65535: " + text);
            }
            return new MetricsAddress(host, port);
        }
    }
}
