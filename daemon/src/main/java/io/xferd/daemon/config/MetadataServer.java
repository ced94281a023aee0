package io.xferd.daemon.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where daemons find each other's segment descriptors, parsed from Mooncake's {@code metadata_server} forms:
 * {@code P2PHANDSHAKE} (peers ask each other directly; the default),
 * {@code etcd://host:port[,host:port...]}, {@code redis://host:port}, {@code http(s)://host:port/path}, or a bare
 * {@code host:port[,...]} whose kind {@code metadata_backend} names (etcd when it does not).
 *
 * @param kind      the backend.
 * @param endpoints the {@code host:port} of each server; empty for P2PHANDSHAKE.
 * @param url       the canonical form, what {@code metadata_server} is set to in the context.
 */
public record MetadataServer(Kind kind, List<String> endpoints, String url)
{
    public static final String P2P_HANDSHAKE = "P2PHANDSHAKE";

    public enum Kind
    {
        P2PHANDSHAKE, ETCD, REDIS, HTTP;

        public String label()
        {
            return name().toLowerCase(Locale.ROOT);
        }

        /**
         * @throws ConfigException when {@code name} is not etcd, redis or http.
         */
        public static Kind ofBackend(final String name)
        {
            return switch (name.toLowerCase(Locale.ROOT))
            {
                case "etcd" -> ETCD;
                case "redis" -> REDIS;
                case "http" -> HTTP;
                default -> throw new ConfigException("metadata_backend must be etcd, redis or http: " + name);
            };
        }
    }

    public MetadataServer
    {
        endpoints = List.copyOf(endpoints);
    }

    public static MetadataServer parse(final String value)
    {
        return parse(value, null);
    }

    /**
     * @param value   {@code metadata_server} as written.
     * @param backend {@code metadata_backend}, or null: the kind of a bare {@code host:port}.
     * @throws ConfigException naming the value when it is none of the accepted forms, or when its scheme and
     *                         {@code backend} disagree.
     */
    public static MetadataServer parse(final String value, final String backend)
    {
        final String trimmed = value == null ? "" : value.trim();
        if (trimmed.equalsIgnoreCase(P2P_HANDSHAKE))
        {
            return new MetadataServer(Kind.P2PHANDSHAKE, List.of(), P2P_HANDSHAKE);
        }
        final Kind backendKind = backend == null ? null : Kind.ofBackend(backend);
        final int scheme = trimmed.indexOf("://");
        if (scheme < 0)
        {
            final Kind kind = backendKind == null ? Kind.ETCD : backendKind;
            final List<String> endpoints = hostPorts(trimmed, value);
            if (kind != Kind.ETCD && endpoints.size() > 1)
            {
                throw invalid(value, "only etcd takes several endpoints");
            }
            return new MetadataServer(kind, endpoints, kind.label() + "://" + trimmed);
        }
        final String prefix = trimmed.substring(0, scheme).toLowerCase(Locale.ROOT);
        final String rest = trimmed.substring(scheme + 3);
        final Kind kind = switch (prefix)
        {
            case "etcd" -> Kind.ETCD;
            case "redis" -> Kind.REDIS;
            case "http", "https" -> Kind.HTTP;
            default -> throw invalid(value, "unknown scheme '" + prefix + "'");
        };
        if (backendKind != null && backendKind != kind)
        {
            throw new ConfigException("metadata_backend " + backendKind.label() + " contradicts metadata_server " +
                value + " (a " + kind.label() + " URL)");
        }
        final List<String> endpoints = switch (kind)
        {
            case ETCD -> hostPorts(rest, value);
            case HTTP -> hostPorts(stripPath(rest), value);
            default -> hostPorts(rest, value);
        };
        if (kind != Kind.ETCD && endpoints.size() > 1)
        {
            throw invalid(value, "only etcd takes several endpoints");
        }
        return new MetadataServer(kind, endpoints, trimmed);
    }

    private static String stripPath(final String rest)
    {
        final int slash = rest.indexOf('/');
        return slash < 0 ? rest : rest.substring(0, slash);
    }

    private static List<String> hostPorts(final String list, final String value)
    {
        final List<String> endpoints = new ArrayList<>();
        for (final String part : list.split(",", -1))
        {
            final String endpoint = part.trim();
            if (!HostPort.isValid(endpoint))
            {
                throw invalid(value, "'" + endpoint + "' is not host:port");
            }
            endpoints.add(endpoint);
        }
        return endpoints;
    }

    private static ConfigException invalid(final String value, final String why)
    {
        return new ConfigException("metadata_server must be P2PHANDSHAKE, etcd://host:port[,host:port...], " +
            "redis://host:port, http://host:port/path or host:port: " + value + " (" + why + ")");
    }
}
