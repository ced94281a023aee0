package io.xferd.daemon;

import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.MetadataServer;
import io.xferd.nativebindings.Availability;

import java.util.function.Supplier;

/**
 * Decides, before the daemon claims anything, which peer transport and metadata backend serve the configuration,
 * and refuses one this build or host cannot serve. xferd never falls back silently: {@code protocol: rdma} on a
 * host without RDMA is an error, not a TCP daemon.
 */
public final class TransportSelector
{
    public enum Transport
    {
        TCP
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
            case "rdma" -> throw rdmaRefused(rdma.get());
            default -> throw new ConfigException("protocol must be tcp or rdma: " + context.protocol());
        };
    }

    private static ConfigException rdmaRefused(final Availability availability)
    {
        final String why = availability.isAvailable() ?
            "protocol rdma requested: the RDMA transport is not in this build yet" :
            "protocol rdma requested but RDMA is not available: " + availability.reason();
        return new ConfigException(why + " (set protocol to tcp; xferd never falls back silently)");
    }
}
