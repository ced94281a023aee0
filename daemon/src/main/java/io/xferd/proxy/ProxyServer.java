package io.xferd.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * {@code xferd proxy}: the OpenAI-compatible front door of a disaggregated deployment. One HTTP server per event
 * loop on the same port (Vert.x spreads the connections), one pooled HTTP client to the backends, a health checker,
 * and optionally the admin endpoint and the config file watch.
 *
 * <p>Routes: {@code POST /v1/completions} and {@code POST /v1/chat/completions} go through prefill then decode;
 * {@code GET /v1/models} is passed to a decode backend; {@code GET /health} is the proxy's own readiness (200 while
 * at least one prefill and one decode backend are healthy); {@code GET /metrics} is Prometheus.
 */
public final class ProxyServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);
    private static final long START_TIMEOUT_S = 30;

    private final ProxyContext context;
    private final NanoClock clock;
    private final ObjectMapper json = new ObjectMapper()
        .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private final Vertx vertx;
    private final Backends backends;
    private final ProxyMetrics metrics;
    private final HttpClient client;
    private final HttpClient healthClient;
    private final HealthChecker health;
    private final ProxyResources shared;
    private final List<HttpServer> servers = new ArrayList<>();
    private HttpServer adminServer;
    private long configTimer = -1;
    private long configStamp;

    private ProxyServer(final ProxyContext context, final NanoClock clock)
    {
        this.context = context;
        this.clock = clock;
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(context.eventLoops()).setWorkerPoolSize(2)
            .setInternalBlockingPoolSize(2));
        backends = new Backends(context, json);
        metrics = new ProxyMetrics(backends.pools());
        client = vertx.createHttpClient(new HttpClientOptions()
                .setKeepAlive(true)
                .setTcpNoDelay(true)
                .setConnectTimeout((int)Math.min(Integer.MAX_VALUE, context.connectTimeoutMs()))
                .setKeepAliveTimeout(60),
            new PoolOptions().setHttp1MaxSize(context.maxConnectionsPerBackend()));
        healthClient = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true)
            .setKeepAliveTimeout(60), new PoolOptions().setHttp1MaxSize(1));
        health = new HealthChecker(vertx, healthClient, backends.pools(), context, clock);
        shared = new ProxyResources(vertx, client, json, context, backends.pool(BackendRole.PREFILL),
            backends.pool(BackendRole.DECODE), new RequestRewriter(context.mode()), metrics, clock);
    }

    /**
     * Concludes the context, adds its backends and starts listening.
     *
     * @throws IllegalArgumentException for a bad configuration.
     * @throws IllegalStateException    when an address cannot be bound.
     */
    public static ProxyServer start(final ProxyContext context)
    {
        return start(context, SystemNanoClock.INSTANCE);
    }

    public static ProxyServer start(final ProxyContext context, final NanoClock clock)
    {
        context.conclude();
        final ProxyServer server = new ProxyServer(context, clock);
        try
        {
            server.open();
            return server;
        }
        catch (final RuntimeException ex)
        {
            server.close();
            throw ex;
        }
    }

    private void open()
    {
        context.prefill().forEach(url -> backends.add(BackendRole.PREFILL, url, BackendSource.COMMAND_LINE));
        context.decode().forEach(url -> backends.add(BackendRole.DECODE, url, BackendSource.COMMAND_LINE));
        if (context.configFile() != null)
        {
            try
            {
                configStamp = stamp();
                backends.applyFile(context.configFile());
            }
            catch (final IOException ex)
            {
                throw new IllegalArgumentException("cannot read " + context.configFile() + ": " + ex.getMessage());
            }
            if (context.configPollMs() > 0)
            {
                configTimer = vertx.setPeriodic(context.configPollMs(), ignored -> reloadIfChanged());
            }
        }
        final HostPort listen = HostPort.parse(context.listen(), "--listen");
        final HttpServerOptions options = new HttpServerOptions().setTcpNoDelay(true).setIdleTimeout(0)
            .setCompressionSupported(false);
        // Vert.x shares one listening socket among servers bound to the same address, handing each new
        // connection to the next server's event loop; a negative port means "the same free port for all"
        final int port = listen.port() == 0 ? -1 : listen.port();
        for (int i = 0; i < context.eventLoops(); i++)
        {
            final HttpServer server = vertx.createHttpServer(options).requestHandler(this::route);
            servers.add(server);
            await(server.listen(port, listen.host()), "listen on " + context.listen());
        }
        if (context.adminListen() != null)
        {
            final HostPort admin = HostPort.parse(context.adminListen(), "--admin-listen");
            adminServer = await(vertx.createHttpServer().requestHandler(new AdminHandler(this)::handle)
                .listen(admin.port(), admin.host()), "listen on " + context.adminListen());
        }
        health.start();
        vertx.runOnContext(ignored -> health.probeAll());
    }

    private static <T> T await(final Future<T> future, final String what)
    {
        try
        {
            return future.toCompletionStage().toCompletableFuture().get(START_TIMEOUT_S, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + what);
        }
        catch (final Exception ex)
        {
            final Throwable cause = ex.getCause() != null ? ex.getCause() : ex;
            throw new IllegalStateException("cannot " + what + ": " + cause.getMessage(), cause);
        }
    }

    private void route(final HttpServerRequest request)
    {
        String requestId = request.getHeader(Headers.REQUEST_ID);
        if (requestId == null || requestId.isEmpty() || requestId.length() > 256)
        {
            requestId = UUID.randomUUID().toString();
        }
        request.response().putHeader(Headers.REQUEST_ID, requestId);
        final String path = request.path();
        switch (path)
        {
            case "/v1/completions", "/v1/chat/completions" ->
            {
                if (request.method() != HttpMethod.POST)
                {
                    reply(request, 405, "use POST for " + path);
                    return;
                }
                new DisaggregatedExchange(shared, request, path.substring(4), requestId).start();
            }
            case "/v1/models" -> passThrough(request, requestId);
            case "/health" -> readiness(request);
            case "/metrics" -> request.response().putHeader(HttpHeaders.CONTENT_TYPE, metrics.contentType())
                .end(Buffer.buffer(metrics.scrape()));
            default -> reply(request, 404, "no route for " + request.method() + " " + path);
        }
    }

    private void reply(final HttpServerRequest request, final int status, final String message)
    {
        metrics.request("other", status);
        request.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
            .end(OpenAiErrors.body(json, status, message));
    }

    private void readiness(final HttpServerRequest request)
    {
        final int prefillHealthy = backends.pool(BackendRole.PREFILL).healthyCount();
        final int decodeHealthy = backends.pool(BackendRole.DECODE).healthyCount();
        final ObjectNode body = json.createObjectNode();
        final boolean ready = prefillHealthy > 0 && decodeHealthy > 0;
        body.put("status", ready ? "ok" : "unavailable");
        body.put("prefill_healthy", prefillHealthy);
        body.put("decode_healthy", decodeHealthy);
        request.response().setStatusCode(ready ? 200 : 503).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
            .end(body.toString());
    }

    /**
     * {@code GET /v1/models}: any healthy decode backend serves the same model as the prefill backends.
     */
    private void passThrough(final HttpServerRequest request, final String requestId)
    {
        final Backend backend = backends.pool(BackendRole.DECODE).select();
        if (backend == null)
        {
            reply(request, 503, "no healthy decode backend");
            return;
        }
        final RequestOptions options = new RequestOptions().setMethod(request.method())
            .setHost(backend.address().host()).setPort(backend.address().port())
            .setURI(backend.address().basePath() + request.uri())
            .setConnectTimeout(context.connectTimeoutMs())
            .setIdleTimeout(context.prefillTimeoutMs());
        Headers.toBackend(request.headers(), options, true);
        options.putHeader(Headers.REQUEST_ID, requestId);
        request.pause();
        client.request(options)
            .compose(backendRequest -> backendRequest.send(request))
            .onComplete(answered ->
            {
                if (answered.failed())
                {
                    LOG.warn("request {}: {} failed: {}", requestId, request.path(), answered.cause().getMessage());
                    reply(request, 502, "backend " + backend.address() + " failed: " + answered.cause().getMessage());
                    return;
                }
                final var answer = answered.result();
                request.response().setStatusCode(answer.statusCode());
                Headers.toClient(answer.headers(), request.response());
                metrics.request("models", answer.statusCode());
                answer.pipeTo(request.response());
            });
    }

    private long stamp() throws IOException
    {
        final BasicFileAttributes attributes = Files.readAttributes(context.configFile(), BasicFileAttributes.class);
        return attributes.lastModifiedTime().toMillis() * 31 + attributes.size();
    }

    private void reloadIfChanged()
    {
        vertx.executeBlocking(() ->
        {
            final long now = stamp();
            if (now != configStamp)
            {
                configStamp = now;
                backends.applyFile(context.configFile());
                LOG.info("backends reloaded from {}", context.configFile());
            }
            return null;
        }, false).onFailure(ex -> LOG.warn("backends not reloaded from {}: {}", context.configFile(),
            ex.getMessage()));
    }

    /**
     * Reads the config file again now (SIGHUP, the admin endpoint).
     *
     * @throws IllegalStateException when there is no config file.
     */
    public void reload() throws IOException
    {
        if (context.configFile() == null)
        {
            throw new IllegalStateException("no --config file to reload");
        }
        backends.applyFile(context.configFile());
        LOG.info("backends reloaded from {}", context.configFile());
    }

    /**
     * @return the port the proxy listens on (the bound one when the context asked for port 0).
     */
    public int port()
    {
        return servers.get(0).actualPort();
    }

    /**
     * @return the admin port, -1 when there is no admin endpoint.
     */
    public int adminPort()
    {
        return adminServer == null ? -1 : adminServer.actualPort();
    }

    public Backends backends()
    {
        return backends;
    }

    public ProxyMetrics metrics()
    {
        return metrics;
    }

    public ProxyContext context()
    {
        return context;
    }

    ObjectMapper json()
    {
        return json;
    }

    /**
     * Probes every backend now rather than at the next interval.
     */
    public void probeNow()
    {
        vertx.runOnContext(ignored -> health.probeAll());
    }

    @Override
    public void close()
    {
        health.stop();
        if (configTimer != -1)
        {
            vertx.cancelTimer(configTimer);
        }
        try
        {
            vertx.close().toCompletionStage().toCompletableFuture().get(START_TIMEOUT_S, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final Exception ex)
        {
            LOG.warn("proxy did not close cleanly: {}", ex.toString());
        }
    }
}
