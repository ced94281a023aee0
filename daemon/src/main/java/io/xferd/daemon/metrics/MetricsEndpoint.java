package io.xferd.daemon.metrics;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.xferd.daemon.config.OperationsContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The Prometheus endpoint, {@code http://<metrics address>/metrics} (loopback by default): one HTTP thread that
 * computes every value at scrape time from {@link MetricsCollector}. A port that cannot be bound is logged and the
 * daemon serves without metrics: transfers matter more than their statistics.
 */
public final class MetricsEndpoint implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);

    private final HTTPServer server;

    private MetricsEndpoint(final HTTPServer server)
    {
        this.server = server;
    }

    /**
     * @return the running endpoint, or null when switched off or the address cannot be bound.
     */
    public static MetricsEndpoint start(final OperationsContext context, final MetricsCollector collector)
    {
        if (context.isMetricsOff())
        {
            return null;
        }
        final OperationsContext.MetricsAddress address =
            OperationsContext.MetricsAddress.parse(context.metricsAddress());
        final PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(collector);
        final ExecutorService executor = Executors.newSingleThreadExecutor(runnable ->
            Thread.ofPlatform().daemon().name("xferd-metrics").unstarted(runnable));
        try
        {
            final HTTPServer server = HTTPServer.builder()
                .inetAddress(InetAddress.getByName(address.host()))
                .port(address.port())
                .registry(registry)
                .executorService(executor)
                .buildAndStart();
            LOG.info("metrics on http://{}:{}/metrics", address.host(), server.getPort());
            return new MetricsEndpoint(server);
        }
        catch (final IOException | RuntimeException ex)
        {
            executor.shutdownNow();
            LOG.warn("metrics endpoint not started: cannot listen on {}: {}", context.metricsAddress(), ex.toString());
            return null;
        }
    }

    public int port()
    {
        return server.getPort();
    }

    @Override
    public void close()
    {
        server.close();
    }
}
