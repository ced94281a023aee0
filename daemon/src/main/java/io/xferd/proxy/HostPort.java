package io.xferd.proxy;

/**
 * A listen address, {@code host:port} ({@code [v6]:port} for IPv6); port 0 binds any free port.
 */
public record HostPort(String host, int port)
{
    public static HostPort parse(final String text, final String option)
    {
        final int colon = text == null ? -1 : text.lastIndexOf(':');
        if (colon <= 0 || !text.substring(colon + 1).matches("[0-9]{1,5}") ||
            Integer.parseInt(text.substring(colon + 1)) > 65535)
        {
            throw new IllegalArgumentException(option + " must be host:port, not '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]"))
        {
            host = host.substring(1, host.length() - 1);
        }
        return new HostPort(host, Integer.parseInt(text.substring(colon + 1)));
    }
}
