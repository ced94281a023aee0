package io.xferd.proxy;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The proxy's Prometheus metrics, served at {@code /metrics} on the proxy's own port. Time to first token is split
 * into its three parts: prefill (prefill request sent to its answer), KV hand-over (prefill answer to the decode
 * backend's response head: the decode engine has taken the request and, in V1, pulled or received the KV) and
 * first decode token (response head to the first body bytes).
 */
public final class ProxyMetrics
{
    static final double[] SECONDS_BOUNDS = {
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter requests;
    private final Counter errors;
    private final Histogram prefill;
    private final Histogram handover;
    private final Histogram firstDecodeToken;
    private final Histogram timeToFirstToken;

    public ProxyMetrics(final List<BackendPool> pools)
    {
        requests = Counter.builder().name("xferd_proxy_requests_total")
            .help("Requests answered by the proxy, by endpoint and HTTP status sent to the client")
            .labelNames("endpoint", "code").register(registry);
        errors = Counter.builder().name("xferd_proxy_errors_total")
            .help("Failed requests, by phase (request, prefill, decode, client) and reason")
            .labelNames("phase", "reason").register(registry);
        prefill = histogram("xferd_proxy_prefill_seconds", "Prefill request sent to prefill answer received");
        handover = histogram("xferd_proxy_kv_handover_seconds",
            "Prefill answer received to the decode backend's response head (KV hand-over)");
        firstDecodeToken = histogram("xferd_proxy_first_decode_token_seconds",
            "Decode response head to its first body bytes");
        timeToFirstToken = histogram("xferd_proxy_time_to_first_token_seconds",
            "Client request body received to the first decode body bytes sent to the client");
        GaugeWithCallback.builder().name("xferd_proxy_backend_outstanding_requests")
            .help("Requests in flight on each backend through this proxy").labelNames("role", "backend")
            .callback(callback -> pools.forEach(pool -> pool.members().forEach(backend ->
                callback.call(backend.outstandingRequests(), pool.role().label(), backend.address().url()))))
            .register(registry);
        GaugeWithCallback.builder().name("xferd_proxy_backend_outstanding_tokens")
            .help("Estimated tokens in flight on each backend through this proxy").labelNames("role", "backend")
            .callback(callback -> pools.forEach(pool -> pool.members().forEach(backend ->
                callback.call(backend.outstandingTokens(), pool.role().label(), backend.address().url()))))
            .register(registry);
        GaugeWithCallback.builder().name("xferd_proxy_backend_healthy")
            .help("1 while a backend is in the choice, 0 while it is ejected").labelNames("role", "backend")
            .callback(callback -> pools.forEach(pool -> pool.members().forEach(backend ->
                callback.call(backend.isHealthy() ? 1 : 0, pool.role().label(), backend.address().url()))))
            .register(registry);
    }

    private Histogram histogram(final String name, final String help)
    {
        return Histogram.builder().name(name).help(help + ", seconds").classicOnly()
            .classicUpperBounds(SECONDS_BOUNDS).register(registry);
    }

    public void request(final String endpoint, final int code)
    {
        requests.labelValues(endpoint, Integer.toString(code)).inc();
    }

    public void error(final String phase, final String reason)
    {
        errors.labelValues(phase, reason).inc();
    }

    public void prefillNanos(final long nanos)
    {
        prefill.observe(nanos / 1e9);
    }

    public void handoverNanos(final long nanos)
    {
        handover.observe(nanos / 1e9);
    }

    public void firstDecodeTokenNanos(final long nanos)
    {
        firstDecodeToken.observe(nanos / 1e9);
    }

    public void timeToFirstTokenNanos(final long nanos)
    {
        timeToFirstToken.observe(nanos / 1e9);
    }

    public String contentType()
    {
        return writer.getContentType();
    }

    /**
     * @return the text exposition of every metric now.
     */
    public byte[] scrape()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        try
        {
            writer.write(out, registry.scrape());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return out.toByteArray();
    }
}
