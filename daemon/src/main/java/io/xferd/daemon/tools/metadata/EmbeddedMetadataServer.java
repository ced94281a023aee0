package io.xferd.daemon.tools.metadata;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.xferd.daemon.metadata.HttpMetadataStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A small http metadata server with Mooncake's contract ({@code GET|PUT|DELETE <path>?key=<key>}; 404 for an
 * absent key) for small deployments and tests: {@code xferd metadata-server}. Keys live in memory; a key PUT
 * with {@value HttpMetadataStore#TTL_HEADER} (or, without it, under a server-wide default TTL when one is set)
 * expires when it is not PUT again within that time. State is lost when the server stops.
 * <p>
 * With a bearer token, every request must carry {@code Authorization: Bearer <token>} (401 otherwise, nothing
 * said). Whatever the token: a value is at most {@value #MAX_VALUE_LENGTH} bytes and a key
 * {@value #MAX_KEY_LENGTH} (413, 400), and at most {@value #MAX_KEYS} keys are held (507 for a new one).
 */
public final class EmbeddedMetadataServer implements AutoCloseable
{
    private record Entry(byte[] value, long expiresAtNanos)
    {
        boolean expired(final long now)
        {
            return expiresAtNanos != 0 && now - expiresAtNanos > 0;
        }
    }

    public static final int MAX_VALUE_LENGTH = 1 << 20;
    public static final int MAX_KEY_LENGTH = 1024;
    public static final int MAX_KEYS = 65_536;

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final byte[] bearer;
    private final HttpServer server;
    private final ExecutorService executor;
    private final long defaultTtlMs;
    private final String path;

    /**
     * @param defaultTtlMs TTL of a key PUT without the TTL header; 0: such keys never expire.
     */
    public EmbeddedMetadataServer(final InetSocketAddress listen, final String path, final long defaultTtlMs)
    {
        this(listen, path, defaultTtlMs, null);
    }

    /**
     * @param bearerToken the token every request must carry, or null: anyone who reaches the server may use it.
     */
    public EmbeddedMetadataServer(
        final InetSocketAddress listen, final String path, final long defaultTtlMs, final String bearerToken)
    {
        this.bearer = bearerToken == null ? null :
            ("Bearer " + bearerToken).getBytes(StandardCharsets.UTF_8);
        this.defaultTtlMs = defaultTtlMs;
        this.path = path;
        try
        {
            this.server = HttpServer.create(listen, 64);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot listen on " + listen + ": " + ex.getMessage(), ex);
        }
        this.executor = Executors.newFixedThreadPool(2, runnable ->
            Thread.ofPlatform().daemon().name("xferd-metadata-http").unstarted(runnable));
        server.setExecutor(executor);
        server.createContext(path, this::handle);
    }

    public EmbeddedMetadataServer start()
    {
        server.start();
        return this;
    }

    /**
     * @return {@code http://host:port/path} as daemons are to be configured with it.
     */
    public String url()
    {
        final InetSocketAddress address = server.getAddress();
        return "http://" + address.getHostString() + ":" + address.getPort() + path;
    }

    public int keyCount()
    {
        final long now = System.nanoTime();
        entries.values().removeIf(entry -> entry.expired(now));
        return entries.size();
    }

    private void handle(final HttpExchange exchange) throws IOException
    {
        try (exchange)
        {
            if (bearer != null && !authorized(exchange.getRequestHeaders().getFirst("Authorization")))
            {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                answer(exchange, 401, "unauthorized");
                return;
            }
            final String key = key(exchange.getRequestURI().getRawQuery());
            if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH)
            {
                answer(exchange, 400, key == null || key.isEmpty() ? "missing ?key=" :
                    "key longer than " + MAX_KEY_LENGTH);
                return;
            }
            final long now = System.nanoTime();
            switch (exchange.getRequestMethod())
            {
                case "GET" ->
                {
                    final Entry entry = entries.get(key);
                    if (entry == null || entry.expired(now))
                    {
                        entries.remove(key, entry);
                        answer(exchange, 404, "metadata not found");
                    }
                    else
                    {
                        exchange.sendResponseHeaders(200, entry.value().length);
                        exchange.getResponseBody().write(entry.value());
                    }
                }
                case "PUT" ->
                {
                    final byte[] value = exchange.getRequestBody().readNBytes(MAX_VALUE_LENGTH + 1);
                    if (value.length > MAX_VALUE_LENGTH)
                    {
                        answer(exchange, 413, "value longer than " + MAX_VALUE_LENGTH + " bytes");
                        return;
                    }
                    if (!entries.containsKey(key) && keyCount() >= MAX_KEYS)
                    {
                        answer(exchange, 507, "the server holds " + MAX_KEYS + " keys already");
                        return;
                    }
                    final long ttlMs = ttl(exchange.getRequestHeaders().getFirst(HttpMetadataStore.TTL_HEADER));
                    entries.put(key, new Entry(value, ttlMs > 0 ? (now + ttlMs * 1_000_000L) | 1 : 0));
                    answer(exchange, 200, "metadata updated");
                }
                case "DELETE" ->
                {
                    final Entry removed = entries.remove(key);
                    answer(exchange, removed == null || removed.expired(now) ? 404 : 200,
                        removed == null ? "metadata not found" : "metadata deleted");
                }
                default -> answer(exchange, 405, "GET, PUT or DELETE");
            }
        }
    }

    private boolean authorized(final String header)
    {
        return header != null &&
            java.security.MessageDigest.isEqual(bearer, header.trim().getBytes(StandardCharsets.UTF_8));
    }

    private long ttl(final String header)
    {
        if (header == null)
        {
            return defaultTtlMs;
        }
        try
        {
            return Long.parseLong(header.trim());
        }
        catch (final NumberFormatException ex)
        {
            return defaultTtlMs;
        }
    }

    private static String key(final String rawQuery)
    {
        if (rawQuery == null)
        {
            return null;
        }
        for (final String part : rawQuery.split("&"))
        {
            if (part.startsWith("key="))
            {
                return URLDecoder.decode(part.substring(4), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private static void answer(final HttpExchange exchange, final int status, final String text) throws IOException
    {
        final byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    @Override
    public void close()
    {
        server.stop(0);
        executor.shutdownNow();
    }
}
