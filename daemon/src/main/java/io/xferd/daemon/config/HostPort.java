package io.xferd.daemon.config;

/**
 * {@code host:port} as the config file writes addresses: a host name, an IPv4 address or a bracketed IPv6
 * address, and a port 0..65535.
 */
final class HostPort
{
    private HostPort()
    {
    }

    static boolean isValid(final String value)
    {
        final int colon = value.lastIndexOf(':');
        return colon > 0 && isHost(value.substring(0, colon)) && isPort(value.substring(colon + 1));
    }

    static boolean isHost(final String host)
    {
        if (host.startsWith("[") && host.endsWith("]"))
        {
            return host.length() > 2 && host.substring(1, host.length() - 1).chars()
                .allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.');
        }
        return !host.isEmpty() && host.chars()
            .allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-' || c == '_');
    }

    static boolean isPort(final String port)
    {
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9'))
        {
            return false;
        }
        return Integer.parseInt(port) <= 65535;
    }
}
