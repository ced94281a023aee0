package io.xferd.daemon.metadata;

import io.xferd.daemon.config.MetadataAccess;
import io.xferd.daemon.config.MetadataServer;

/**
 * Opens the store a {@code metadata_server} names. Opening connects to nothing yet: a store that is down at start
 * is found so by the first operation, which the publisher retries.
 */
public final class MetadataStores
{
    private MetadataStores()
    {
    }

    /**
     * @param ttlMs     how long keys outlive their last renewal.
     * @param timeoutMs the longest one operation may wait for the store.
     * @throws IllegalArgumentException for {@code P2PHANDSHAKE}, which has no store.
     */
    public static MetadataStore open(final MetadataServer server, final long ttlMs, final long timeoutMs)
    {
        return open(server, ttlMs, timeoutMs, null);
    }

    /**
     * @param bearerToken the http store's bearer token ({@code metadata_token_file}), or null.
     */
    public static MetadataStore open(
        final MetadataServer server, final long ttlMs, final long timeoutMs, final String bearerToken)
    {
        return open(server, ttlMs, timeoutMs, bearerToken, MetadataAccess.NONE);
    }

    /**
     * @param access credentials and TLS of an etcd or redis store ({@code metadata_username} ...).
     * @throws IllegalArgumentException for credentials or TLS settings given to an http store, which takes a bearer
     *                                  token instead.
     */
    public static MetadataStore open(
        final MetadataServer server,
        final long ttlMs,
        final long timeoutMs,
        final String bearerToken,
        final MetadataAccess access)
    {
        if (server.kind() == MetadataServer.Kind.HTTP && !access.isNone())
        {
            throw new IllegalArgumentException("metadata_username, metadata_password_file and metadata_tls_* are " +
                "for etcd and redis; an http metadata store takes metadata_token_file");
        }
        access.validate();
        return switch (server.kind())
        {
            case ETCD -> new EtcdMetadataStore(server.url(), server.endpoints(), ttlMs, timeoutMs, access);
            case REDIS -> new RedisMetadataStore(server.url(), server.endpoints().getFirst(), ttlMs, timeoutMs,
                access);
            case HTTP -> new HttpMetadataStore(server.url(), ttlMs, timeoutMs, bearerToken);
            case P2PHANDSHAKE -> throw new IllegalArgumentException("P2PHANDSHAKE has no metadata store");
        };
    }
}
