package io.xferd.proxy;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.xferd.proxy.standin.StandInOpenAiServer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Stand-in backends on their own Vert.x (as if they were other processes), a proxy in front of them, and a plain
 * JDK HTTP client; closes everything it started.
 */
final class ProxyHarness implements AutoCloseable
{
    static final Duration WAIT = Duration.ofSeconds(30);

    final Vertx backendsVertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
    final List<StandInOpenAiServer> prefill = new ArrayList<>();
    final List<StandInOpenAiServer> decode = new ArrayList<>();
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();
    ProxyServer proxy;

    ProxyHarness(final int prefillCount, final int decodeCount)
    {
        for (int i = 0; i < prefillCount; i++)
        {
            prefill.add(StandInOpenAiServer.start(backendsVertx, "prefill-" + i));
        }
        for (int i = 0; i < decodeCount; i++)
        {
            decode.add(StandInOpenAiServer.start(backendsVertx, "decode-" + i));
        }
    }

    /**
     * @return a context on a free loopback port with these backends, probes every 50 ms, two event loops.
     */
    ProxyContext context()
    {
        return new ProxyContext().listen("127.0.0.1:0")
            .prefill(prefill.stream().map(StandInOpenAiServer::url).toList())
            .decode(decode.stream().map(StandInOpenAiServer::url).toList())
            .healthIntervalMs(50).healthTimeoutMs(10_000).connectTimeoutMs(30_000).minEjectMs(0).eventLoops(2);
    }

    ProxyHarness start(final ProxyContext context)
    {
        proxy = ProxyServer.start(context);
        return this;
    }

    String url(final String path)
    {
        return "http://127.0.0.1:" + proxy.port() + path;
    }

    HttpResponse<String> post(final String path, final String body, final String... headers) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(path))).timeout(WAIT)
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2)
        {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(final String path) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create(url(path))).timeout(WAIT).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Sends a raw request on a fresh socket (the caller reads and closes it).
     */
    Socket rawPost(final String path, final String body) throws IOException
    {
        final Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", proxy.port()), 10_000);
        socket.setSoTimeout((int)WAIT.toMillis());
        final byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        final OutputStream out = socket.getOutputStream();
        out.write(("POST " + path + " HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\n" +
            "Content-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
        return socket;
    }

    /**
     * Reads from the socket until the text appears (or the stream ends), returning what was read.
     */
    static String readUntil(final InputStream in, final String marker) throws IOException
    {
        final ByteArrayOutputStream read = new ByteArrayOutputStream();
        final byte[] buffer = new byte[4096];
        while (!read.toString(StandardCharsets.UTF_8).contains(marker))
        {
            final int n = in.read(buffer);
            if (n < 0)
            {
                break;
            }
            read.write(buffer, 0, n);
        }
        return read.toString(StandardCharsets.UTF_8);
    }

    /**
     * Polls until the condition holds, at most {@link #WAIT}.
     */
    static void await(final String what, final BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    static String streamingCompletion(final int maxTokens)
    {
        return "{\"model\":\"stand-in\",\"prompt\":\"The capital of France is\",\"max_tokens\":" + maxTokens +
            ",\"stream\":true}";
    }

    @Override
    public void close() throws Exception
    {
        if (proxy != null)
        {
            proxy.close();
        }
        http.close();
        backendsVertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
