package io.xferd.daemon.metadata;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Segment keys on an http metadata server with Mooncake's contract: {@code GET|PUT|DELETE <url>?key=<key>}, a
 * GET of an absent key answers 404. Each PUT carries {@value #TTL_HEADER} (the TTL in ms): xferd's embedded
 * server ({@code xferd metadata-server}) drops a key not PUT again within it; a server that ignores the header
 * (Mooncake's own) keeps keys until they are deleted. Renewal PUTs every owned key again. No push: the caller
 * polls what it cached.
 */
public final class HttpMetadataStore implements MetadataStore
{
    public static final String TTL_HEADER = "X-Xferd-Ttl-Ms";
    public static final String DEFAULT_PATH = "/metadata";

    private final String url;
    private final String base;
    private final long ttlMs;
    private final Duration timeout;
    private final HttpClient client;
    private final String bearerToken;

    /**
     * @param url {@code http://host:port[/path]}; the path defaults to {@value #DEFAULT_PATH}.
     */
    public HttpMetadataStore(final String url, final long ttlMs, final long timeoutMs)
    {
        this(url, ttlMs, timeoutMs, null);
    }

    /**
     * @param bearerToken sent as {@code Authorization: Bearer} with every request (the embedded server's
     *                    {@code --token-file}), or null.
     */
    public HttpMetadataStore(final String url, final long ttlMs, final long timeoutMs, final String bearerToken)
    {
        this.bearerToken = bearerToken;
        this.url = url;
        final URI uri = URI.create(url);
        final String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? DEFAULT_PATH : uri.getRawPath();
        this.base = uri.getScheme() + "://" + uri.getRawAuthority() + path + "?key=";
        this.ttlMs = ttlMs;
        this.timeout = Duration.ofMillis(timeoutMs);
        this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    @Override
    public String url()
    {
        return url;
    }

    @Override
    public void put(final String key, final String value)
    {
        send("PUT " + key, request(key).header(TTL_HEADER, Long.toString(ttlMs))
            .PUT(HttpRequest.BodyPublishers.ofString(value, StandardCharsets.UTF_8)).build(), false);
    }

    @Override
    public String get(final String key)
    {
        return send("GET " + key, request(key).GET().build(), true);
    }

    @Override
    public void delete(final String key)
    {
        send("DELETE " + key, request(key).DELETE().build(), true);
    }

    @Override
    public void renew(final Map<String, String> owned)
    {
        for (final Map.Entry<String, String> entry : owned.entrySet())
        {
            put(entry.getKey(), entry.getValue());
        }
        if (owned.isEmpty())
        {
            get("xferd/ping");
        }
    }

    @Override
    public boolean watch(final String prefix, final Consumer<String> changed)
    {
        return false;
    }

    private HttpRequest.Builder request(final String key)
    {
        final HttpRequest.Builder builder =
            HttpRequest.newBuilder(URI.create(base + URLEncoder.encode(key, StandardCharsets.UTF_8))).timeout(timeout);
        return bearerToken == null ? builder : builder.header("Authorization", "Bearer " + bearerToken);
    }

    /**
     * @return the body of a 2xx answer; null for a 404 when {@code absentIsNull}.
     */
    private String send(final String what, final HttpRequest request, final boolean absentIsNull)
    {
        final HttpResponse<String> response;
        try
        {
            response = client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        }
        catch (final IOException ex)
        {
            throw new MetadataException("http " + url + ": " + what + ": " + ex, ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new MetadataException("http " + url + ": " + what + ": interrupted", ex);
        }
        if (response.statusCode() == 404 && absentIsNull)
        {
            return null;
        }
        if (response.statusCode() / 100 != 2)
        {
            throw new MetadataException("http " + url + ": " + what + ": status " + response.statusCode() + " " +
                response.body());
        }
        return response.body();
    }

    @Override
    public void close()
    {
        client.close();
    }
}
