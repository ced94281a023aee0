package io.xferd.daemon.transport;

import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.config.MetadataServer;
import io.xferd.nativebindings.Availability;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Supplier;

/**
 * Decides, before the daemon claims anything, which peer transport and metadata backend serve the configuration,
 * and refuses one this build or host cannot serve. xferd never falls back silently: {@code protocol: rdma} on a
 * host without RDMA is an error, not a TCP daemon, unless the configuration asks for it by name
 * ({@code protocol_fallback: tcp}), and then it says so loudly.
 */
public final class TransportSelector
{
    private static final Logger LOG = LoggerFactory.getLogger(TransportSelector.class);

    public enum Transport
    {
        TCP, RDMA
    }

    private TransportSelector()
    {
    }

    /**
     * @param rdma whether RDMA can be used here ({@code Verbs::availability}); asked only when rdma is configured.
     * @return the transport to start.
     * @throws ConfigException saying what cannot be served and what to set instead.
     */
    public static Transport select(final DaemonContext context, final Supplier<Availability> rdma)
    {
        // every backend is served; one that is down at start is retried in the background (see ClusterMetadata)
        MetadataServer.parse(context.metadataServer());
        return switch (context.protocol())
        {
            case "tcp" -> Transport.TCP;
            case "rdma" ->
            {
                final Availability availability = rdma.get();
                yield availability.isAvailable() ? Transport.RDMA :
                    fallbackOrRefuse(context, "RDMA is not available: " + availability.reason());
            }
            default -> throw new ConfigException("protocol must be tcp or rdma: " + context.protocol());
        };
    }

    /**
     * RDMA was asked for and cannot be served ({@code why}): TCP when the configuration names that fallback,
     * with a WARN naming the reason; otherwise a refusal.
     *
     * @throws ConfigException without {@code protocol_fallback: tcp}.
     */
    public static Transport fallbackOrRefuse(final DaemonContext context, final String why)
    {
        if ("tcp".equals(context.protocolFallback()))
        {
            LOG.warn("protocol rdma requested but {}; serving TCP instead because protocol_fallback is tcp", why);
            return Transport.TCP;
        }
        throw new ConfigException("protocol rdma requested but " + why + " (set protocol to tcp, or " +
            "protocol_fallback to tcp to serve TCP when RDMA cannot be used; xferd never falls back silently)");
    }
}
