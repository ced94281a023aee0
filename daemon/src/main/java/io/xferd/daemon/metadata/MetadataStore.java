package io.xferd.daemon.metadata;

import java.util.Map;
import java.util.function.Consumer;

/**
 * A key-value directory shared by the daemons of a cluster (etcd, redis or an http server), holding segment
 * descriptors as JSON. Every key a store puts lives under that store's lease (etcd) or TTL (redis, http): it
 * disappears by itself unless {@link #renew} is called within the TTL, so a dead daemon's keys go away.
 * <p>
 * Every method may block on the network for up to the store's operation timeout and throws
 * {@link MetadataException} when the store cannot be reached or refuses; callers keep them off the threads that
 * must not block (the conductor, the data plane).
 */
public interface MetadataStore extends AutoCloseable
{
    /**
     * @return the store's address as configured, for log lines.
     */
    String url();

    /**
     * Put {@code value} under {@code key}, under this store's lease/TTL.
     */
    void put(String key, String value);

    /**
     * @return the value, or null when the key is absent (or expired).
     */
    String get(String key);

    void delete(String key);

    /**
     * Create {@code key} with {@code value} under this store's lease/TTL only when no key of that name exists:
     * the claim of a segment name. Atomic where the store has a compare (etcd transaction, redis {@code SET NX});
     * the default reads, then puts (the http store: two claimants at the same moment are not told apart).
     *
     * @return true when this call created the key.
     */
    default boolean putIfAbsent(final String key, final String value)
    {
        if (get(key) != null)
        {
            return false;
        }
        put(key, value);
        return true;
    }

    /**
     * Put {@code value} under {@code key} only while the key still holds {@code expected}: taking over a key whose
     * value was judged no claim (an unsigned descriptor, this daemon's own from before a restart) without
     * overwriting a claim made in between. Atomic where the store has a compare; the default reads, then puts.
     *
     * @return true when the key held {@code expected} and now holds {@code value}.
     */
    default boolean replace(final String key, final String expected, final String value)
    {
        if (!expected.equals(get(key)))
        {
            return false;
        }
        put(key, value);
        return true;
    }

    /**
     * Keep every key this store put alive for another TTL. {@code owned} are those keys with their values: a
     * store whose lease was lost (expired while the server was away, or a server that restarted empty) puts them
     * again.
     */
    void renew(Map<String, String> owned);

    /**
     * Report keys under {@code prefix} that change or disappear: {@code changed} gets the key, or null when
     * anything may have changed (the watch was interrupted). Called on a thread of the store's.
     *
     * @return false when this store cannot push changes; the caller then polls what it cached.
     */
    boolean watch(String prefix, Consumer<String> changed);

    /**
     * Release the lease (its keys go at once where the store allows it) and the connections. Idempotent.
     */
    @Override
    void close();
}
