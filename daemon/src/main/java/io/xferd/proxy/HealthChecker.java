package io.xferd.proxy;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import org.agrona.concurrent.NanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Probes every backend, healthy or ejected, with {@code GET <health path>} at a fixed interval, through its own small
 * connection pool (so that a probe never waits behind a busy backend's streams), and tells each backend the result:
 * that is what ejects a backend that stopped answering and brings an ejected one back.
 */
final class HealthChecker
{
    private static final Logger LOG = LoggerFactory.getLogger(HealthChecker.class);

    private final Vertx vertx;
    private final HttpClient client;
    private final List<BackendPool> pools;
    private final ProxyContext context;
    private final NanoClock clock;
    private final Set<Backend> probing = ConcurrentHashMap.newKeySet();
    private long timerId = -1;

    HealthChecker(final Vertx vertx, final HttpClient client, final List<BackendPool> pools,
        final ProxyContext context, final NanoClock clock)
    {
        this.vertx = vertx;
        this.client = client;
        this.pools = pools;
        this.context = context;
        this.clock = clock;
    }

    void start()
    {
        if (context.healthIntervalMs() > 0)
        {
            timerId = vertx.setPeriodic(context.healthIntervalMs(), ignored -> probeAll());
        }
    }

    void stop()
    {
        if (timerId != -1)
        {
            vertx.cancelTimer(timerId);
        }
    }

    void probeAll()
    {
        for (final BackendPool pool : pools)
        {
            for (final Backend backend : pool.members())
            {
                if (probing.add(backend))
                {
                    probe(backend);
                }
            }
        }
    }

    private void probe(final Backend backend)
    {
        final RequestOptions options = new RequestOptions()
            .setMethod(HttpMethod.GET)
            .setHost(backend.address().host())
            .setPort(backend.address().port())
            .setURI(backend.address().basePath() + context.healthPath())
            .setConnectTimeout(context.healthTimeoutMs())
            .setIdleTimeout(context.healthTimeoutMs());
        client.request(options)
            .compose(request -> request.send())
            .compose(response -> response.body().map(body -> response.statusCode()))
            .onComplete(result ->
            {
                probing.remove(backend);
                final boolean ok = result.succeeded() && result.result() == 200;
                final String why = result.succeeded() ? "health answered HTTP " + result.result() :
                    "health probe failed: " + result.cause().getMessage();
                if (backend.onProbe(ok, why, clock.nanoTime()))
                {
                    if (ok)
                    {
                        LOG.info("{} restored: health probe passed", backend);
                    }
                    else
                    {
                        LOG.warn("{} ejected: {}", backend, why);
                    }
                }
            });
    }
}
