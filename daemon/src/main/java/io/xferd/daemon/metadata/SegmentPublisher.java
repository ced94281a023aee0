package io.xferd.daemon.metadata;

import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.SegmentDescriptor;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.SystemEpochClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Keeps this daemon's segments in the metadata store, on its own thread: one key per connected client
 * ({@link MetadataKeys#segment}) holding its descriptor, put when the client connects and whenever it registers or
 * unregisters memory, deleted when it disconnects, renewed every TTL/3. The conductor only enqueues
 * ({@link #changed}, {@link #removed}); nothing here blocks it.
 * <p>
 * A store that does not answer is retried with backoff (200 ms doubling up to 5 s) while the daemon goes on
 * serving its local clients; each change of state is logged once ("unreachable, retrying" / "reachable again,
 * re-published N segment(s)"), and on recovery every segment is put again.
 * <p>
 * Every deadline (the renewal, the next attempt) is read from the injected clock, and the thread only waits for a
 * change or the next deadline and then calls {@link #doWork}: tests call that themselves, moving the clock.
 */
public final class SegmentPublisher implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(SegmentPublisher.class);
    private static final long FIRST_BACKOFF_MS = 200;
    private static final long MAX_BACKOFF_MS = 5000;
    /** Rounds of create-or-compare-and-replace before a key that keeps changing is left for the next renewal. */
    private static final int CLAIM_ATTEMPTS = 3;

    private record Change(ClientSession session, boolean removed)
    {
    }

    private final MetadataStore store;
    private final MetadataKeys keys;
    private final Function<ClientSession, SegmentDescriptor> describer;
    private final long renewIntervalMs;
    private final long ttlMs;
    private final LinkedBlockingQueue<Change> changes = new LinkedBlockingQueue<>();
    private final Map<String, ClientSession> sessions = new LinkedHashMap<>();
    private final Map<String, String> published = new LinkedHashMap<>();
    private final Set<String> dirty = new LinkedHashSet<>();
    private final Set<String> deletes = new LinkedHashSet<>();
    // keys whose name another daemon holds (its signed descriptor is there): tried again at each renewal
    private final Set<String> contested = new LinkedHashSet<>();
    private final Set<String> contestedLogged = new LinkedHashSet<>();
    private final java.util.function.Predicate<SegmentDescriptor> validClaim;
    private final EpochClock clock;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean reachable;
    private boolean everReachable;
    private long backoffMs = FIRST_BACKOFF_MS;
    private long nextAttemptMs;
    private long nextRenewMs;

    public SegmentPublisher(
        final MetadataStore store,
        final MetadataKeys keys,
        final Function<ClientSession, SegmentDescriptor> describer,
        final long ttlMs)
    {
        this(store, keys, describer, ttlMs, descriptor -> true);
    }

    /**
     * @param validClaim whether a descriptor found under a key is a claim to respect (signed with the cluster key):
     *                   a name another daemon holds that way is not taken over until its key is gone.
     */
    public SegmentPublisher(
        final MetadataStore store,
        final MetadataKeys keys,
        final Function<ClientSession, SegmentDescriptor> describer,
        final long ttlMs,
        final java.util.function.Predicate<SegmentDescriptor> validClaim)
    {
        this(store, keys, describer, ttlMs, validClaim, SystemEpochClock.INSTANCE);
    }

    /**
     * @param clock where the renewal and retry deadlines are read (ms).
     */
    public SegmentPublisher(
        final MetadataStore store,
        final MetadataKeys keys,
        final Function<ClientSession, SegmentDescriptor> describer,
        final long ttlMs,
        final java.util.function.Predicate<SegmentDescriptor> validClaim,
        final EpochClock clock)
    {
        this.clock = clock;
        this.validClaim = validClaim;
        this.store = store;
        this.keys = keys;
        this.describer = describer;
        this.ttlMs = ttlMs;
        this.renewIntervalMs = Math.max(50, ttlMs / 3);
        this.thread = Thread.ofPlatform().daemon().name("xferd-metadata-publisher").unstarted(this::run);
    }

    public void start()
    {
        thread.start();
    }

    /**
     * The client connected or its regions changed: (re)publish its descriptor. Any thread; never blocks.
     */
    public void changed(final ClientSession session)
    {
        changes.offer(new Change(session, false));
    }

    /**
     * The client disconnected: delete its key. Any thread; never blocks.
     */
    public void removed(final ClientSession session)
    {
        changes.offer(new Change(session, true));
    }

    /**
     * @return whether the last operation on the store succeeded.
     */
    public boolean isReachable()
    {
        return reachable;
    }

    private void run()
    {
        while (running)
        {
            final long now = clock.time();
            final long due = reachable ? Math.min(nextRenewMs, dirty.isEmpty() && deletes.isEmpty() ? Long.MAX_VALUE :
                now) : nextAttemptMs;
            try
            {
                final Change first = changes.poll(Math.max(0, Math.min(due - now, 1000)), TimeUnit.MILLISECONDS);
                if (first != null && first.session() != null)
                {
                    apply(first);
                }
            }
            catch (final InterruptedException ex)
            {
                if (!running)
                {
                    return;
                }
            }
            doWork();
        }
    }

    /**
     * One step: take the queued changes, then talk to the store if anything is due on the clock (changes to put or
     * delete, the renewal, or, while the store is unreachable, the next attempt once its back-off has ended).
     * The publisher's thread calls it; tests that never {@link #start} it call it directly.
     *
     * @return false while the store is unreachable and the back-off has not ended (nothing was tried).
     */
    boolean doWork()
    {
        Change next;
        while ((next = changes.poll()) != null && next.session() != null)
        {
            apply(next);
        }
        if (reachable || clock.time() >= nextAttemptMs)
        {
            publish();
            return true;
        }
        return false;
    }

    private void apply(final Change change)
    {
        final String name = change.session().segmentName();
        final String key = keys.segment(name);
        if (change.removed())
        {
            if (sessions.get(name) == change.session())
            {
                sessions.remove(name);
                dirty.remove(key);
                contestedLogged.remove(key);
                if (contested.remove(key))
                {
                    // never ours: nothing to delete
                    return;
                }
                published.remove(key);
                deletes.add(key);
            }
        }
        else if (!change.session().isClosed())
        {
            sessions.put(name, change.session());
            deletes.remove(key);
            dirty.add(key);
        }
    }

    private void publish()
    {
        final boolean recovering = !reachable;
        try
        {
            if (recovering)
            {
                // whatever the store kept or lost while away, every segment goes in again
                dirty.addAll(sessions.keySet().stream().map(keys::segment).toList());
                store.renew(published);
                nextRenewMs = clock.time() + renewIntervalMs;
            }
            flush();
            if (clock.time() >= nextRenewMs)
            {
                store.renew(published);
                nextRenewMs = clock.time() + renewIntervalMs;
                // names another daemon held: theirs until their lease ends, then ours
                dirty.addAll(contested);
                contested.clear();
            }
            if (recovering)
            {
                reachable = true;
                backoffMs = FIRST_BACKOFF_MS;
                if (everReachable)
                {
                    LOG.info("metadata store {} reachable again, re-published {} segment(s)", store.url(),
                        published.size());
                }
                else
                {
                    LOG.info("metadata store {} reachable: publishing {} segment(s) under {} (TTL {} ms)",
                        store.url(), published.size(), keys.segmentsPrefix(), ttlMs);
                }
                everReachable = true;
            }
        }
        catch (final MetadataException ex)
        {
            if (!running)
            {
                return;
            }
            if (reachable || backoffMs == FIRST_BACKOFF_MS)
            {
                LOG.warn("metadata store {} unreachable{} ({}), retrying with backoff up to {} ms; local clients " +
                    "are served meanwhile and established peers keep working", store.url(),
                    everReachable ? "" : " at start", ex.getMessage(), MAX_BACKOFF_MS);
            }
            reachable = false;
            nextAttemptMs = clock.time() + backoffMs;
            backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        }
    }

    private void flush()
    {
        for (final var iterator = deletes.iterator(); iterator.hasNext(); )
        {
            store.delete(iterator.next());
            iterator.remove();
        }
        for (final var iterator = dirty.iterator(); iterator.hasNext(); )
        {
            final String key = iterator.next();
            final ClientSession session = sessions.get(keys.segmentName(key));
            if (session != null && !session.isClosed())
            {
                final SegmentDescriptor descriptor = describer.apply(session);
                final String json = descriptor.toJson();
                if (published.containsKey(key))
                {
                    store.put(key, json);
                }
                else
                {
                    final String holder = claim(key, json, descriptor.rpcAddress());
                    if (holder != null)
                    {
                        contested.add(key);
                        if (contestedLogged.add(key))
                        {
                            LOG.warn("segment name {} is held by the daemon at {} until its key in {} expires: " +
                                "this daemon's client of that name is not published (tried again every {} ms)",
                                keys.segmentName(key), holder, store.url(), renewIntervalMs);
                        }
                        iterator.remove();
                        continue;
                    }
                }
                published.put(key, json);
                if (contestedLogged.remove(key))
                {
                    LOG.info("segment name {} is free again: published by this daemon", keys.segmentName(key));
                }
            }
            iterator.remove();
        }
    }

    /**
     * Claim {@code key} for {@code json}: create it if absent; else, when what it holds is no claim of another
     * daemon (not a valid signed descriptor, or this daemon's own address: a restart of the same daemon takes its
     * names back), replace exactly that value. Both steps are compare-and-set where the store has one (etcd,
     * redis), so of two claimants at the same moment one wins and the other is told who holds the name; the http
     * store reads, then puts.
     *
     * @return null when this daemon now holds the key, else the rpc address of the daemon that does.
     */
    private String claim(final String key, final String json, final String ownAddress)
    {
        for (int attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++)
        {
            if (store.putIfAbsent(key, json))
            {
                return null;
            }
            final String existing = store.get(key);
            if (existing == null)
            {
                continue; // expired in between: create it
            }
            final String holder = holderOf(existing, ownAddress);
            if (holder != null)
            {
                return holder;
            }
            if (store.replace(key, existing, json))
            {
                return null;
            }
        }
        return "(changing while claimed)";
    }

    /**
     * @return the rpc address of another daemon whose valid (signed) descriptor {@code existing} is, or null when
     * it is no claim against {@code ownAddress}.
     */
    private String holderOf(final String existing, final String ownAddress)
    {
        try
        {
            final SegmentDescriptor descriptor = SegmentDescriptor.fromJson(existing);
            return descriptor.rpcAddress() != null && !descriptor.rpcAddress().equals(ownAddress) &&
                validClaim.test(descriptor) ? descriptor.rpcAddress() : null;
        }
        catch (final IllegalArgumentException ex)
        {
            // not a descriptor this daemon can read: no claim
            return null;
        }
    }

    /**
     * Stop; delete what is still published (best effort, only while the store answers) and close the store.
     */
    @Override
    public void close()
    {
        running = false;
        changes.offer(new Change(null, true));
        try
        {
            thread.join(5000);
            if (thread.isAlive())
            {
                thread.interrupt();
                thread.join(1000);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        Change change;
        while ((change = changes.poll()) != null)
        {
            if (change.session() != null)
            {
                apply(change);
            }
        }
        if (reachable)
        {
            try
            {
                deletes.addAll(published.keySet());
                for (final String key : deletes)
                {
                    store.delete(key);
                }
            }
            catch (final MetadataException ex)
            {
                LOG.info("metadata store {}: segments left to expire with the TTL ({})", store.url(), ex.getMessage());
            }
        }
        store.close();
    }
}
