package io.xferd.daemon.metadata;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;

import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.MetadataAccess;

import javax.net.ssl.SSLException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Segment keys in etcd (jetcd): every key is attached to one lease of this daemon, granted with the TTL (in
 * whole seconds, at least 1) and kept alive by {@link #renew}; when the daemon dies the lease expires and etcd
 * deletes the keys itself. A lease etcd no longer knows (it expired while the daemon could not reach etcd, or
 * etcd lost its data) is replaced and every key put again. Watches are etcd's own (a prefix watch that jetcd
 * resumes after a reconnect).
 */
public final class EtcdMetadataStore implements MetadataStore
{
    private final String url;
    private final Client client;
    private final long ttlSeconds;
    private final long timeoutMs;
    private long leaseId;
    private Watch.Watcher watcher;
    private boolean closed;

    /**
     * @param endpoints {@code host:port} of each etcd member.
     */
    public EtcdMetadataStore(final String url, final List<String> endpoints, final long ttlMs, final long timeoutMs)
    {
        this(url, endpoints, ttlMs, timeoutMs, MetadataAccess.NONE);
    }

    /**
     * @param access etcd's user and password (both or neither), and TLS: the CA to trust, and a client certificate
     *               with its key for mutual TLS.
     */
    public EtcdMetadataStore(
        final String url,
        final List<String> endpoints,
        final long ttlMs,
        final long timeoutMs,
        final MetadataAccess access)
    {
        quietVertx();
        this.url = url;
        this.ttlSeconds = Math.max(1, (ttlMs + 999) / 1000);
        this.timeoutMs = timeoutMs;
        final String scheme = access.tls() ? "https://" : "http://";
        final ClientBuilder builder = Client.builder()
            .endpoints(endpoints.stream().map(endpoint -> scheme + endpoint).toArray(String[]::new))
            .connectTimeout(Duration.ofMillis(timeoutMs))
            .waitForReady(false)
            .retryMaxAttempts(2)
            .retryDelay(100)
            .retryMaxDelay(500)
            .retryMaxDuration(Duration.ofMillis(timeoutMs));
        final String password = access.password();
        if ((access.username() == null) != (password == null))
        {
            throw new ConfigException("etcd " + url + ": metadata_username and metadata_password_file go together");
        }
        if (password != null)
        {
            builder.user(bytes(access.username())).password(bytes(password));
        }
        if (access.tls())
        {
            try
            {
                builder.sslContext(ssl ->
                {
                    ssl.trustManager(access.tlsCaFile().toFile());
                    if (access.tlsCertFile() != null)
                    {
                        ssl.keyManager(access.tlsCertFile().toFile(), access.tlsKeyFile().toFile());
                    }
                });
            }
            catch (final SSLException | IllegalArgumentException ex)
            {
                throw new ConfigException("etcd " + url + ": cannot use the TLS files " + access.describe() + ": " +
                    ex.getMessage(), ex);
            }
        }
        this.client = builder.build();
    }

    /**
     * Vert.x (under jetcd) caches class-path files in a {@code .vertx} directory of the working directory unless
     * told not to; jetcd logs a warning for each retry of each call while etcd is away, where the publisher logs
     * once per change of state.
     */
    private static void quietVertx()
    {
        if (System.getProperty("org.slf4j.simpleLogger.log.io.etcd.jetcd") == null)
        {
            System.setProperty("org.slf4j.simpleLogger.log.io.etcd.jetcd", "error");
        }
        if (System.getProperty("vertx.disableFileCPResolving") == null)
        {
            System.setProperty("vertx.disableFileCPResolving", "true");
        }
        if (System.getProperty("vertx.cacheDirBase") == null)
        {
            System.setProperty("vertx.cacheDirBase", System.getProperty("java.io.tmpdir") + "/xferd-vertx");
        }
    }

    @Override
    public String url()
    {
        return url;
    }

    @Override
    public synchronized void put(final String key, final String value)
    {
        try
        {
            putUnderLease(key, value);
        }
        catch (final MetadataException ex)
        {
            if (!isLeaseLost(ex))
            {
                throw ex;
            }
            leaseId = 0;
            putUnderLease(key, value);
        }
    }

    private void putUnderLease(final String key, final String value)
    {
        final long lease = lease();
        await(client.getKVClient().put(bytes(key), bytes(value), PutOption.builder().withLeaseId(lease).build()),
            "put " + key);
    }

    private long lease()
    {
        if (leaseId == 0)
        {
            leaseId = await(client.getLeaseClient().grant(ttlSeconds), "grant a lease").getID();
        }
        return leaseId;
    }

    /**
     * One transaction: put under this daemon's lease if the key's create revision is 0 (no such key).
     */
    @Override
    public synchronized boolean putIfAbsent(final String key, final String value)
    {
        return putIf(key, value, new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(0)));
    }

    /**
     * One transaction: put under this daemon's lease if the key's value is still {@code expected}.
     */
    @Override
    public synchronized boolean replace(final String key, final String expected, final String value)
    {
        return putIf(key, value, new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.value(bytes(expected))));
    }

    private boolean putIf(final String key, final String value, final Cmp condition)
    {
        try
        {
            return transact(key, value, condition);
        }
        catch (final MetadataException ex)
        {
            if (!isLeaseLost(ex))
            {
                throw ex;
            }
            leaseId = 0;
            return transact(key, value, condition);
        }
    }

    private boolean transact(final String key, final String value, final Cmp condition)
    {
        final long lease = lease();
        return await(client.getKVClient().txn()
            .If(condition)
            .Then(Op.put(bytes(key), bytes(value), PutOption.builder().withLeaseId(lease).build()))
            .commit(), "claim " + key).isSucceeded();
    }

    @Override
    public String get(final String key)
    {
        final List<KeyValue> kvs = await(client.getKVClient().get(bytes(key)), "get " + key).getKvs();
        return kvs.isEmpty() ? null : kvs.getFirst().getValue().toString(StandardCharsets.UTF_8);
    }

    @Override
    public void delete(final String key)
    {
        await(client.getKVClient().delete(bytes(key)), "delete " + key);
    }

    @Override
    public synchronized void renew(final Map<String, String> owned)
    {
        if (leaseId != 0)
        {
            try
            {
                if (await(client.getLeaseClient().keepAliveOnce(leaseId), "keep the lease alive").getTTL() > 0)
                {
                    return;
                }
            }
            catch (final MetadataException ex)
            {
                if (!isLeaseLost(ex))
                {
                    throw ex;
                }
            }
            leaseId = 0;
        }
        for (final Map.Entry<String, String> entry : owned.entrySet())
        {
            putUnderLease(entry.getKey(), entry.getValue());
        }
        if (owned.isEmpty())
        {
            lease();
        }
    }

    @Override
    public synchronized boolean watch(final String prefix, final Consumer<String> changed)
    {
        watcher = client.getWatchClient().watch(bytes(prefix), WatchOption.builder().isPrefix(true).build(),
            Watch.listener(response ->
            {
                for (final WatchEvent event : response.getEvents())
                {
                    changed.accept(event.getKeyValue().getKey().toString(StandardCharsets.UTF_8));
                }
            }, error -> changed.accept(null)));
        return true;
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (watcher != null)
        {
            watcher.close();
        }
        if (leaseId != 0)
        {
            try
            {
                // the keys go at once rather than a TTL later
                client.getLeaseClient().revoke(leaseId).get(Math.min(timeoutMs, 1000), TimeUnit.MILLISECONDS);
            }
            catch (final ExecutionException | TimeoutException ignore)
            {
                // they expire with the lease instead
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        client.close();
    }

    private static boolean isLeaseLost(final MetadataException ex)
    {
        final String message = String.valueOf(ex.getMessage());
        return message.contains("lease not found") || message.contains("NOT_FOUND");
    }

    private <T> T await(final CompletableFuture<T> future, final String what)
    {
        try
        {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        catch (final TimeoutException ex)
        {
            future.cancel(true);
            throw new MetadataException("etcd " + url + ": " + what + ": no answer within " + timeoutMs + " ms");
        }
        catch (final ExecutionException ex)
        {
            final Throwable cause = ex.getCause() == null ? ex : ex.getCause();
            throw new MetadataException("etcd " + url + ": " + what + ": " + reasons(cause), cause);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new MetadataException("etcd " + url + ": " + what + ": interrupted", ex);
        }
    }

    /**
     * jetcd's exception says only the gRPC status ("UNAUTHENTICATED"); etcd's reason ("authentication failed,
     * invalid user ID or password") and a TLS failure's ("unable to find valid certification path") are further
     * down the chain: every distinct message, outermost first.
     */
    static String reasons(final Throwable failure)
    {
        final StringBuilder reasons = new StringBuilder();
        final java.util.Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Throwable cause = failure; cause != null && seen.add(cause); cause = cause.getCause())
        {
            final String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
            if (reasons.indexOf(message) < 0)
            {
                reasons.append(reasons.isEmpty() ? "" : ": ").append(message);
            }
        }
        return reasons.toString();
    }

    private static ByteSequence bytes(final String text)
    {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
