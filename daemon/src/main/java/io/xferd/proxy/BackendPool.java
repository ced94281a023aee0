package io.xferd.proxy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The backends of one role and the choice among them: the healthy backend with the fewest requests in flight, then
 * the fewest estimated tokens in flight (a long prompt weighs more than a short one), then the next in turn, so that
 * equally loaded backends share the work. Membership is copy-on-write: selection, on every request, reads one
 * volatile array; adding and removing (rare, operator actions) copy it.
 */
public final class BackendPool
{
    private static final Backend[] EMPTY = new Backend[0];

    private final BackendRole role;
    private final AtomicInteger turn = new AtomicInteger();
    private volatile Backend[] backends = EMPTY;

    public BackendPool(final BackendRole role)
    {
        this.role = role;
    }

    public BackendRole role()
    {
        return role;
    }

    /**
     * @return the least loaded healthy backend, or null when none is healthy.
     */
    public Backend select()
    {
        final Backend[] members = backends;
        final int count = members.length;
        if (count == 0)
        {
            return null;
        }
        final int start = Math.floorMod(turn.getAndIncrement(), count);
        Backend best = null;
        for (int i = 0; i < count; i++)
        {
            final Backend candidate = members[(start + i) % count];
            if (candidate.isHealthy() && (best == null || lessLoaded(candidate, best)))
            {
                best = candidate;
            }
        }
        return best;
    }

    private static boolean lessLoaded(final Backend candidate, final Backend best)
    {
        final int requests = Integer.compare(candidate.outstandingRequests(), best.outstandingRequests());
        return requests < 0 || (requests == 0 && candidate.outstandingTokens() < best.outstandingTokens());
    }

    /**
     * @return the backend now in the pool at that URL: the new one, or the one already there (unchanged).
     */
    public synchronized Backend add(final Backend backend)
    {
        if (backend.role() != role)
        {
            throw new IllegalArgumentException(backend + " is not a " + role.label() + " backend");
        }
        final Backend existing = find(backend.address().url());
        if (existing != null)
        {
            return existing;
        }
        final Backend[] grown = Arrays.copyOf(backends, backends.length + 1);
        grown[grown.length - 1] = backend;
        backends = grown;
        return backend;
    }

    /**
     * Takes a backend out of the choice; requests already on it run to their end.
     *
     * @return the removed backend, or null if no backend has that URL.
     */
    public synchronized Backend remove(final String url)
    {
        final Backend[] members = backends;
        for (int i = 0; i < members.length; i++)
        {
            if (members[i].address().url().equals(url))
            {
                final Backend removed = members[i];
                final Backend[] shrunk = new Backend[members.length - 1];
                System.arraycopy(members, 0, shrunk, 0, i);
                System.arraycopy(members, i + 1, shrunk, i, members.length - i - 1);
                backends = shrunk;
                return removed;
            }
        }
        return null;
    }

    public Backend find(final String url)
    {
        for (final Backend backend : backends)
        {
            if (backend.address().url().equals(url))
            {
                return backend;
            }
        }
        return null;
    }

    /**
     * @return the members now, in the order they were added.
     */
    public List<Backend> members()
    {
        return List.of(backends);
    }

    public int healthyCount()
    {
        int healthy = 0;
        for (final Backend backend : backends)
        {
            healthy += backend.isHealthy() ? 1 : 0;
        }
        return healthy;
    }

    /**
     * @return the URLs of the members added by that source.
     */
    public List<String> urlsFrom(final BackendSource source)
    {
        final List<String> urls = new ArrayList<>();
        for (final Backend backend : backends)
        {
            if (backend.source() == source)
            {
                urls.add(backend.address().url());
            }
        }
        return urls;
    }
}
