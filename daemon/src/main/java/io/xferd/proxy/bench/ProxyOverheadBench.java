package io.xferd.proxy.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.xferd.proxy.ProxyContext;
import io.xferd.proxy.ProxyServer;
import io.xferd.proxy.standin.StandInOpenAiServer;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the proxy costs per request, measured in one run against its baseline: the same client, the same stand-in
 * prefill and decode backends, the same two requests, made either directly (the client sends the prefill request,
 * then the decode request, itself) or through the proxy. Latency is measured one request at a time, direct and
 * proxied requests alternating so that both see the same machine; throughput with a fixed number of requests in
 * flight, closed loop.
 */
public final class ProxyOverheadBench
{
    /**
     * @param requests     measured requests per path for latency (after as many again for warm-up).
     * @param tokens       events in each streamed decode answer.
     * @param concurrency  requests in flight for the throughput phase.
     * @param seconds      length of each throughput phase.
     * @param eventLoops   the proxy's event loops.
     */
    public record Settings(int requests, int tokens, int concurrency, int seconds, int eventLoops)
    {
    }

    private static final String PREFILL_BODY =
        "{\"model\":\"m\",\"prompt\":\"bench\",\"max_tokens\":1,\"stream\":false," +
            "\"kv_transfer_params\":{\"do_remote_decode\":true}}";

    private final Settings settings;
    private final String decodeBody;
    private io.vertx.core.Context clientContext;

    public ProxyOverheadBench(final Settings settings)
    {
        this.settings = settings;
        this.decodeBody = "{\"model\":\"m\",\"prompt\":\"bench\",\"max_tokens\":" + settings.tokens() +
            ",\"stream\":true}";
    }

    public void run(final PrintStream out) throws Exception
    {
        final Vertx backends = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        final Vertx clients = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        final StandInOpenAiServer prefill = StandInOpenAiServer.start(backends, "prefill");
        final StandInOpenAiServer decode = StandInOpenAiServer.start(backends, "decode").tokens(settings.tokens(), 0);
        final ProxyServer proxy = ProxyServer.start(new ProxyContext().listen("127.0.0.1:0")
            .prefill(java.util.List.of(prefill.url())).decode(java.util.List.of(decode.url()))
            .healthIntervalMs(1_000).eventLoops(settings.eventLoops()));
        try
        {
            clientContext = clients.getOrCreateContext();
            final HttpClient client = clients.createHttpClient(new HttpClientOptions().setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(Math.max(2, settings.concurrency())));
            final Target direct = new Target("direct (client -> prefill, then -> decode)", client,
                port(prefill.url()), port(decode.url()));
            final Target proxied = new Target("through xferd proxy", client, proxy.port(), -1);

            try
            {
                latency(out, direct, proxied);
            }
            catch (final java.util.concurrent.TimeoutException ex)
            {
                throw new IllegalStateException("a request did not complete; backends: " +
                    proxy.backends().describe() + " prefill " + prefill.completed() + "/" + prefill.active() +
                    " decode " + decode.completed() + "/" + decode.active() + "/" + decode.cancelled() +
                    " last prefill " + last(prefill) + " last decode " + last(decode), ex);
            }
            throughput(out, direct);
            throughput(out, proxied);
            if (Boolean.getBoolean("xferd.bench.proxy.metrics"))
            {
                new String(proxy.metrics().scrape()).lines().filter(line -> line.contains("_sum") ||
                    line.contains("_count") || line.contains("requests_total{")).forEach(out::println);
            }
        }
        finally
        {
            proxy.close();
            clients.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            backends.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private void latency(final PrintStream out, final Target direct, final Target proxied) throws Exception
    {
        final Histogram directNanos = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final Histogram proxiedNanos = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        for (int i = 0; i < 2 * settings.requests(); i++)
        {
            final boolean measured = i >= settings.requests();
            final long directTook = direct.once().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            final long proxiedTook = proxied.once().toCompletionStage().toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
            if (measured)
            {
                directNanos.recordValue(directTook);
                proxiedNanos.recordValue(proxiedTook);
            }
        }
        out.printf("latency, one request at a time, %d requests each (decode answer: %d SSE events)%n",
            settings.requests(), settings.tokens());
        out.printf("  %-44s p50 %8.1f us  p90 %8.1f us  p99 %8.1f us%n", direct.name,
            us(directNanos, 50), us(directNanos, 90), us(directNanos, 99));
        out.printf("  %-44s p50 %8.1f us  p90 %8.1f us  p99 %8.1f us%n", proxied.name,
            us(proxiedNanos, 50), us(proxiedNanos, 90), us(proxiedNanos, 99));
        out.printf("  %-44s p50 %8.1f us  p90 %8.1f us  p99 %8.1f us%n", "added by the proxy",
            us(proxiedNanos, 50) - us(directNanos, 50), us(proxiedNanos, 90) - us(directNanos, 90),
            us(proxiedNanos, 99) - us(directNanos, 99));
    }

    private void throughput(final PrintStream out, final Target target) throws Exception
    {
        final AtomicLong completed = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        final long end = warmupEnd + TimeUnit.SECONDS.toNanos(settings.seconds());
        final long[] counted = new long[1];
        final Promise<Void> done = Promise.promise();
        final AtomicLong running = new AtomicLong(settings.concurrency());
        for (int i = 0; i < settings.concurrency(); i++)
        {
            loop(target, end, warmupEnd, completed, failed, running, done);
        }
        done.future().toCompletionStage().toCompletableFuture().get(settings.seconds() + 60L, TimeUnit.SECONDS);
        counted[0] = completed.get();
        out.printf("throughput, %d in flight, %d s: %-44s %9.0f requests/s (%d failed)%n", settings.concurrency(),
            settings.seconds(), target.name, counted[0] / (double)settings.seconds(), failed.get());
    }

    private void loop(final Target target, final long end, final long warmupEnd, final AtomicLong completed,
        final AtomicLong failed, final AtomicLong running, final Promise<Void> done)
    {
        target.once().onComplete(result ->
        {
            final long now = System.nanoTime();
            if (now >= warmupEnd && now < end)
            {
                (result.succeeded() ? completed : failed).incrementAndGet();
            }
            if (now < end)
            {
                loop(target, end, warmupEnd, completed, failed, running, done);
            }
            else if (running.decrementAndGet() == 0)
            {
                done.tryComplete();
            }
        });
    }

    private static String last(final StandInOpenAiServer server)
    {
        final var received = server.received();
        return received.subList(Math.max(0, received.size() - 3), received.size()).stream()
            .map(StandInOpenAiServer.Received::requestId).toList().toString();
    }

    private static double us(final Histogram histogram, final double percentile)
    {
        return histogram.getValueAtPercentile(percentile) / 1e3;
    }

    private static int port(final String url)
    {
        return Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
    }

    /**
     * One way to get an answer: through the proxy (one request), or directly (prefill, then decode).
     */
    private final class Target
    {
        private final String name;
        private final HttpClient client;
        private final int firstPort;
        private final int decodePort;
        private final io.vertx.core.Context context;

        Target(final String name, final HttpClient client, final int firstPort, final int decodePort)
        {
            this.name = name;
            this.client = client;
            this.firstPort = firstPort;
            this.decodePort = decodePort;
            this.context = clientContext;
        }

        // numbers this target's request ids
        private int sequence;

        /**
         * Every request starts on the client's one event loop (as the proxy's do), never on the caller's thread.
         *
         * @return the nanoseconds from sending to the end of the decode answer.
         */
        Future<Long> once()
        {
            final Promise<Long> took = Promise.promise();
            context.runOnContext(ignored -> timed().onComplete(took));
            return took.future();
        }

        private Future<Long> timed()
        {
            final String id = (decodePort < 0 ? "proxied-" : "direct-") + sequence++;
            final long start = System.nanoTime();
            final Future<Buffer> answer = decodePort < 0 ? post(firstPort, decodeBody, id) :
                post(firstPort, PREFILL_BODY, id).compose(ignored -> post(decodePort, decodeBody, id));
            return answer.map(body ->
            {
                if (!body.toString().endsWith("data: [DONE]\n\n"))
                {
                    throw new IllegalStateException("incomplete answer: " + body);
                }
                return System.nanoTime() - start;
            });
        }

        private Future<Buffer> post(final int port, final String body, final String id)
        {
            return client.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
                    .setURI("/v1/completions").putHeader("content-type", "application/json")
                    .putHeader("X-Request-Id", id))
                .compose(request -> request.send(Buffer.buffer(body)))
                .compose(response -> response.statusCode() == 200 ? response.body() :
                    Future.failedFuture("HTTP " + response.statusCode()));
        }
    }
}
