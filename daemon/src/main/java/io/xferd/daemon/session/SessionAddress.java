package io.xferd.daemon.session;

/**
 * A Mooncake session name, {@code host:port} with nothing after the port: the port is one segment's own RPC port
 * (a segment listener of the TCP transport), so the pair names exactly one segment. IPv6 hosts are bracketed
 * ({@code [::1]:15001}); the host is kept as written, brackets included, as socket addresses take it. Control path.
 *
 * @param host as written, never empty.
 * @param port 1..65535.
 */
public record SessionAddress(String host, int port)
{
    /**
     * @return the session {@code name} names, or null when it is not {@code host:port} (a plain segment name, or
     * {@code host:port/name}).
     */
    public static SessionAddress parse(final String name)
    {
        if (name == null || name.indexOf('/') >= 0)
        {
            return null;
        }
        final int colon = name.lastIndexOf(':');
        if (colon <= 0 || colon == name.length() - 1 || name.length() - colon - 1 > 5)
        {
            return null;
        }
        int port = 0;
        for (int i = colon + 1; i < name.length(); i++)
        {
            final char c = name.charAt(i);
            if (c < '0' || c > '9')
            {
                return null;
            }
            port = port * 10 + (c - '0');
        }
        if (port < 1 || port > 65535)
        {
            return null;
        }
        final String host = name.substring(0, colon);
        final boolean bracketed = host.startsWith("[") && host.endsWith("]") && host.length() > 2;
        // an unbracketed host with a colon is an IPv6 address without its port's brackets: ambiguous, not a session
        if (!bracketed && host.indexOf(':') >= 0)
        {
            return null;
        }
        for (int i = 0; i < host.length(); i++)
        {
            final char c = host.charAt(i);
            if (c <= ' ' || c == 0x7f)
            {
                return null;
            }
        }
        return new SessionAddress(host, port);
    }

    /**
     * @return the host without IPv6 brackets, as {@link java.net.InetAddress} literals are written.
     */
    public String bareHost()
    {
        return host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    }

    @Override
    public String toString()
    {
        return host + ":" + port;
    }
}
