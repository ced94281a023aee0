package io.xferd.daemon.metadata;

import io.xferd.daemon.auth.DescriptorSigner;
import io.xferd.daemon.transport.SegmentDescriptor;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.SystemEpochClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Finds other daemons' segments by plain name in the metadata store, on its own thread, and caches what it found.
 * A cached descriptor is checked again when the store reports its key changed (etcd's watch, redis keyspace
 * notifications) or, for stores that cannot push, every poll interval; one that changed or disappeared (the peer
 * restarted, re-registered, or died) is dropped from the cache, logged once, and read afresh on the next open.
 * A handle given out earlier stays as it is: the transport's epoch check catches a restarted peer.
 * <p>
 * The poll is due on the injected clock: the directory's thread ticks {@link #pollIfDue} several times an interval,
 * and tests that never {@link #start} it call that themselves, moving the clock.
 */
public final class SegmentDirectory implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(SegmentDirectory.class);

    private final MetadataStore store;
    private final MetadataKeys keys;
    private final long pollIntervalMs;
    private final DescriptorSigner signer;
    private final EpochClock clock;
    // when the cached descriptors are next re-read, for stores that cannot push (directory thread only)
    private long nextPollMs;
    private final Map<String, String> cache = new ConcurrentHashMap<>();
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(runnable ->
        Thread.ofPlatform().daemon().name("xferd-metadata-lookup").unstarted(runnable));

    public SegmentDirectory(
        final MetadataStore store, final MetadataKeys keys, final long pollIntervalMs, final DescriptorSigner signer)
    {
        this(store, keys, pollIntervalMs, signer, SystemEpochClock.INSTANCE);
    }

    /**
     * @param clock where the poll's deadline is read (ms).
     */
    public SegmentDirectory(
        final MetadataStore store,
        final MetadataKeys keys,
        final long pollIntervalMs,
        final DescriptorSigner signer,
        final EpochClock clock)
    {
        this.clock = clock;
        this.nextPollMs = clock.time() + pollIntervalMs;
        this.signer = signer;
        this.store = store;
        this.keys = keys;
        this.pollIntervalMs = pollIntervalMs;
    }

    /**
     * Start watching the cluster's keys (or polling the cached ones when the store cannot push).
     */
    public void start()
    {
        execute(() ->
        {
            boolean pushed;
            try
            {
                pushed = store.watch(keys.segmentsPrefix(), this::onChanged);
            }
            catch (final MetadataException ex)
            {
                LOG.info("metadata store {}: no watch ({}): cached descriptors are re-read every {} ms instead",
                    store.url(), ex.getMessage(), pollIntervalMs);
                pushed = false;
            }
            if (!pushed)
            {
                final long tickMs = Math.max(1, pollIntervalMs / 4);
                executor.scheduleWithFixedDelay(this::pollIfDue, tickMs, tickMs, TimeUnit.MILLISECONDS);
            }
        });
    }

    /**
     * Look {@code segmentName} up, from the cache unless {@code fresh}; {@code onResult} gets (descriptor, null),
     * or (null, why) when it is not in the store or the store cannot be asked. On the directory's thread.
     */
    public void resolve(
        final String segmentName, final boolean fresh, final BiConsumer<SegmentDescriptor, String> onResult)
    {
        execute(() ->
        {
            try
            {
                final String json = fresh ? null : cache.get(segmentName);
                final String found = json != null ? json : store.get(keys.segment(segmentName));
                if (found == null)
                {
                    onResult.accept(null, "no segment named " + segmentName + " in metadata store " + store.url() +
                        " (" + keys.segmentsPrefix() + ")");
                    return;
                }
                final SegmentDescriptor descriptor;
                try
                {
                    // signed with the cluster key and naming what was asked for, or not used at all
                    descriptor = signer.verify(SegmentDescriptor.fromJson(found)).requireSegment(segmentName);
                }
                catch (final IllegalArgumentException ex)
                {
                    LOG.warn("metadata store {}, key {}: {}", store.url(), keys.segment(segmentName), ex.getMessage());
                    throw ex;
                }
                cache.put(segmentName, found);
                onResult.accept(descriptor, null);
            }
            catch (final MetadataException | IllegalArgumentException ex)
            {
                onResult.accept(null, "cannot look " + segmentName + " up: " + ex.getMessage());
            }
        });
    }

    /**
     * @return whether {@code segmentName} is cached (for tests and status).
     */
    public boolean isCached(final String segmentName)
    {
        return cache.containsKey(segmentName);
    }

    public void invalidate(final String segmentName)
    {
        cache.remove(segmentName);
    }

    /**
     * Re-read every cached descriptor when the poll interval has passed on the clock since the last poll (at
     * exactly the interval, not 1 ms before). On the directory's thread.
     *
     * @return whether it polled.
     */
    boolean pollIfDue()
    {
        final long now = clock.time();
        if (now < nextPollMs)
        {
            return false;
        }
        nextPollMs = now + pollIntervalMs;
        recheck(List.copyOf(cache.keySet()));
        return true;
    }

    private void onChanged(final String key)
    {
        if (key == null)
        {
            execute(() -> recheck(List.copyOf(cache.keySet())));
            return;
        }
        final String name = keys.segmentName(key);
        if (name != null && cache.containsKey(name))
        {
            execute(() -> recheck(List.of(name)));
        }
    }

    /**
     * Drop every named entry whose key now holds something else (a re-PUT of the same descriptor, as redis and
     * http renewals are, keeps it).
     */
    private void recheck(final List<String> names)
    {
        for (final String name : names)
        {
            final String cached = cache.get(name);
            if (cached == null)
            {
                continue;
            }
            final String now;
            try
            {
                now = store.get(keys.segment(name));
            }
            catch (final MetadataException ex)
            {
                // the store is away: keep what is cached, established peers keep working
                return;
            }
            if (!cached.equals(now) && cache.remove(name, cached))
            {
                LOG.info("segment {} {} in the metadata store: dropped from the cache", name,
                    now == null ? "disappeared" : "changed (its daemon restarted or it re-registered)");
            }
        }
    }

    private void execute(final Runnable task)
    {
        try
        {
            executor.execute(task);
        }
        catch (final RejectedExecutionException ignore)
        {
            // closing
        }
    }

    @Override
    public void close()
    {
        executor.shutdownNow();
    }
}
