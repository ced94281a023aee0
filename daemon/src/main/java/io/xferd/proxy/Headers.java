package io.xferd.proxy;

import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.RequestOptions;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which headers cross the proxy: all but the hop-by-hop ones (RFC 9110 section 7.6.1) and those the proxy sets
 * itself.
 */
final class Headers
{
    static final String REQUEST_ID = "X-Request-Id";

    private static final Set<String> NOT_FORWARDED = Set.of(
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "host", "content-length", "expect", "x-request-id");

    private Headers()
    {
    }

    /**
     * @param keepEncoding false for a body the proxy must read itself (a prefill answer): no compression asked for.
     */
    static void toBackend(final MultiMap client, final RequestOptions request, final boolean keepEncoding)
    {
        for (final Map.Entry<String, String> header : client)
        {
            final String name = header.getKey().toLowerCase(Locale.ROOT);
            if (!NOT_FORWARDED.contains(name) && (keepEncoding || !"accept-encoding".equals(name)))
            {
                request.addHeader(header.getKey(), header.getValue());
            }
        }
    }

    static void toClient(final MultiMap backend, final HttpServerResponse response)
    {
        for (final Map.Entry<String, String> header : backend)
        {
            final String name = header.getKey().toLowerCase(Locale.ROOT);
            if (!NOT_FORWARDED.contains(name) && !"content-length".equals(name))
            {
                response.headers().add(header.getKey(), header.getValue());
            }
        }
        final String length = backend.get(HttpHeaders.CONTENT_LENGTH);
        if (length != null)
        {
            response.putHeader(HttpHeaders.CONTENT_LENGTH, length);
        }
        else
        {
            response.setChunked(true);
        }
    }
}
