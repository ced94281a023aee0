package io.xferd.daemon.metadata;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.MetadataAccess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocketFactory;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Segment keys in redis (Jedis): {@code SET key value PX ttl}, renewed by setting every owned key again (a redis
 * that restarted empty gets them back on the next renewal). Changes are pushed through keyspace notifications
 * when the server has them on ({@code notify-keyspace-events} holding {@code K} and {@code $}, {@code g},
 * {@code x}, or {@code A}); xferd never changes the server's configuration itself, so without them the
 * caller polls what it cached.
 */
public final class RedisMetadataStore implements MetadataStore
{
    private static final Logger LOG = LoggerFactory.getLogger(RedisMetadataStore.class);

    private static final String COMPARE_AND_SET =
        "if redis.call('GET', KEYS[1]) == ARGV[1] then " +
        "return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return false end";

    private final String url;
    private final HostAndPort endpoint;
    private final JedisClientConfig config;
    private final JedisClientConfig subscriberConfig;
    private final long ttlMs;
    private Jedis connection;
    private volatile Thread subscriber;
    private volatile JedisPubSub subscription;
    private volatile boolean closed;

    public RedisMetadataStore(final String url, final String endpoint, final long ttlMs, final long timeoutMs)
    {
        this(url, endpoint, ttlMs, timeoutMs, MetadataAccess.NONE);
    }

    /**
     * @param access the redis user (ACL; without one a password authenticates the default user) and password,
     *               and TLS: the CA to trust, and a client certificate with its key for mutual TLS.
     */
    public RedisMetadataStore(
        final String url, final String endpoint, final long ttlMs, final long timeoutMs, final MetadataAccess access)
    {
        this.url = url;
        this.endpoint = HostAndPort.from(endpoint);
        this.ttlMs = ttlMs;
        this.config = withAccess(url, access, DefaultJedisClientConfig.builder())
            .connectionTimeoutMillis((int)timeoutMs)
            .socketTimeoutMillis((int)timeoutMs)
            .clientName("xferd")
            .protocol(RedisProtocol.RESP2)
            .build();
        this.subscriberConfig = withAccess(url, access, DefaultJedisClientConfig.builder())
            .connectionTimeoutMillis((int)timeoutMs)
            .socketTimeoutMillis(0)
            .protocol(RedisProtocol.RESP2)
            .build();
    }

    private static DefaultJedisClientConfig.Builder withAccess(
        final String url, final MetadataAccess access, final DefaultJedisClientConfig.Builder builder)
    {
        final String password = access.password();
        if (access.username() != null && password == null)
        {
            throw new ConfigException("redis " + url + ": metadata_username needs metadata_password_file");
        }
        builder.user(access.username()).password(password);
        if (access.tls())
        {
            builder.ssl(true).sslSocketFactory(sslSocketFactory(url, access));
        }
        return builder;
    }

    /**
     * Netty's PEM reading (already on the class path under jetcd and Vert.x), giving a JDK context for Jedis.
     */
    private static SSLSocketFactory sslSocketFactory(final String url, final MetadataAccess access)
    {
        try
        {
            final SslContextBuilder ssl = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                .trustManager(access.tlsCaFile().toFile());
            if (access.tlsCertFile() != null)
            {
                ssl.keyManager(access.tlsCertFile().toFile(), access.tlsKeyFile().toFile());
            }
            return ((JdkSslContext)ssl.build()).context().getSocketFactory();
        }
        catch (final SSLException | IllegalArgumentException ex)
        {
            throw new ConfigException("redis " + url + ": cannot use the TLS files " + access.describe() + ": " +
                ex.getMessage(), ex);
        }
    }

    @Override
    public String url()
    {
        return url;
    }

    @Override
    public void put(final String key, final String value)
    {
        call("set " + key, jedis -> jedis.set(key, value, SetParams.setParams().px(ttlMs)));
    }

    /**
     * {@code SET key value NX PX ttl}: one command, atomic on the server.
     */
    @Override
    public boolean putIfAbsent(final String key, final String value)
    {
        return "OK".equals(call("set nx " + key, jedis -> jedis.set(key, value, SetParams.setParams().nx().px(ttlMs))));
    }

    /**
     * A Lua compare-and-set, atomic on the server.
     */
    @Override
    public boolean replace(final String key, final String expected, final String value)
    {
        final Object answer = call("compare-and-set " + key, jedis -> jedis.eval(COMPARE_AND_SET,
            java.util.List.of(key), java.util.List.of(expected, value, Long.toString(ttlMs))));
        return "OK".equals(answer);
    }

    @Override
    public String get(final String key)
    {
        return call("get " + key, jedis -> jedis.get(key));
    }

    @Override
    public void delete(final String key)
    {
        call("del " + key, jedis -> jedis.del(key));
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
            call("ping", Jedis::ping);
        }
    }

    @Override
    public boolean watch(final String prefix, final Consumer<String> changed)
    {
        final String events = call("config get notify-keyspace-events",
            jedis -> jedis.configGet("notify-keyspace-events").getOrDefault("notify-keyspace-events", ""));
        if (!events.contains("K") || !(events.contains("A") || events.contains("$") || events.contains("g")))
        {
            LOG.info("redis {}: keyspace notifications are off (notify-keyspace-events '{}'): cached descriptors " +
                "are re-read periodically instead (set notify-keyspace-events K$gx for pushed invalidation)",
                url, events);
            return false;
        }
        final String channelPrefix = "__keyspace@0__:";
        subscriber = Thread.ofPlatform().daemon().name("xferd-redis-watch").start(() ->
        {
            while (!closed)
            {
                try (Jedis jedis = new Jedis(endpoint, subscriberConfig))
                {
                    subscription = new JedisPubSub()
                    {
                        @Override
                        public void onPMessage(final String pattern, final String channel, final String message)
                        {
                            changed.accept(channel.substring(channelPrefix.length()));
                        }

                        @Override
                        public void onPSubscribe(final String pattern, final int count)
                        {
                            // anything may have changed while no subscription was up
                            changed.accept(null);
                        }
                    };
                    jedis.psubscribe(subscription, channelPrefix + prefix + "*");
                }
                catch (final JedisException ex)
                {
                    if (!closed)
                    {
                        sleep(500);
                    }
                }
            }
        });
        return true;
    }

    private synchronized <T> T call(final String what, final Function<Jedis, T> command)
    {
        try
        {
            if (connection == null || connection.isBroken())
            {
                closeConnection();
                connection = new Jedis(endpoint, config);
            }
            return command.apply(connection);
        }
        catch (final JedisException ex)
        {
            closeConnection();
            throw new MetadataException("redis " + url + ": " + what + ": " + ex.getMessage(), ex);
        }
    }

    private void closeConnection()
    {
        if (connection != null)
        {
            try
            {
                connection.close();
            }
            catch (final JedisException ignore)
            {
                // gone anyway
            }
            connection = null;
        }
    }

    private static void sleep(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final JedisPubSub current = subscription;
        if (current != null)
        {
            try
            {
                current.punsubscribe();
            }
            catch (final JedisException | NullPointerException ignore)
            {
                // not subscribed (any more)
            }
        }
        if (subscriber != null)
        {
            subscriber.interrupt();
        }
        synchronized (this)
        {
            closeConnection();
        }
    }
}
