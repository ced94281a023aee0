package io.xferd.proxy;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Where one OpenAI-compatible backend listens: {@code http://host:port} with an optional base path (requests go to
 * base path + the client's path). Plain HTTP only: the backends sit on the deployment's private network.
 *
 * @param host     host name or address, without brackets.
 * @param port     TCP port.
 * @param basePath "" or a path without a trailing slash.
 * @param url      the normalised URL, the backend's identity in metrics, logs and the admin endpoint.
 */
public record BackendAddress(String host, int port, String basePath, String url)
{
    /**
     * @param text {@code http://host:port[/base]}, or {@code host:port}.
     * @return the parsed address.
     * @throws IllegalArgumentException when it is not a usable http URL.
     */
    public static BackendAddress parse(final String text)
    {
        final String trimmed = text.trim();
        final String withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed;
        final URI uri;
        try
        {
            uri = new URI(withScheme);
        }
        catch (final URISyntaxException ex)
        {
            throw new IllegalArgumentException("not a backend URL: '" + text + "'");
        }
        if (!"http".equals(uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT)))
        {
            throw new IllegalArgumentException("backend URL must be http://host:port: '" + text + "'");
        }
        if (uri.getHost() == null || uri.getPort() <= 0 || uri.getPort() > 65535 || uri.getQuery() != null ||
            uri.getFragment() != null || uri.getUserInfo() != null)
        {
            throw new IllegalArgumentException("backend URL must be http://host:port[/path]: '" + text + "'");
        }
        String host = uri.getHost();
        if (host.startsWith("[") && host.endsWith("]"))
        {
            host = host.substring(1, host.length() - 1);
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (path.endsWith("/"))
        {
            path = path.substring(0, path.length() - 1);
        }
        final String hostInUrl = host.contains(":") ? "[" + host + "]" : host;
        return new BackendAddress(host, uri.getPort(), path, "http://" + hostInUrl + ":" + uri.getPort() + path);
    }

    @Override
    public String toString()
    {
        return url;
    }
}
