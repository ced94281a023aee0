package io.xferd.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import org.agrona.concurrent.NanoClock;

/**
 * What every exchange shares: thread-safe, made once by {@link ProxyServer}.
 *
 * @param vertx    timers.
 * @param client   the pooled HTTP client to the backends.
 * @param json     JSON parsing and writing.
 * @param context  the configuration.
 * @param prefill  the prefill backends.
 * @param decode   the decode backends.
 * @param rewriter the deployment's request rewriting.
 * @param metrics  the proxy's metrics.
 * @param clock    time for phases and health.
 */
record ProxyResources(
    Vertx vertx,
    HttpClient client,
    ObjectMapper json,
    ProxyContext context,
    BackendPool prefill,
    BackendPool decode,
    RequestRewriter rewriter,
    ProxyMetrics metrics,
    NanoClock clock)
{
}
