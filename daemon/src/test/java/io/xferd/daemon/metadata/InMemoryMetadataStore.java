package io.xferd.daemon.metadata;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A metadata store in a map, for tests: counts what it was asked and, while {@code failing}, refuses everything;
 * it cannot push changes (the directory polls).
 */
final class InMemoryMetadataStore implements MetadataStore
{
    final Map<String, String> values = new ConcurrentHashMap<>();
    volatile boolean failing;
    int calls;
    int renewals;
    Map<String, String> lastRenewed = Map.of();

    @Override
    public String url()
    {
        return "memory://test";
    }

    @Override
    public void put(final String key, final String value)
    {
        call();
        values.put(key, value);
    }

    @Override
    public String get(final String key)
    {
        call();
        return values.get(key);
    }

    @Override
    public void delete(final String key)
    {
        call();
        values.remove(key);
    }

    @Override
    public void renew(final Map<String, String> owned)
    {
        call();
        renewals++;
        lastRenewed = Map.copyOf(owned);
        values.putAll(owned);
    }

    @Override
    public boolean watch(final String prefix, final Consumer<String> changed)
    {
        return false;
    }

    @Override
    public void close()
    {
    }

    private void call()
    {
        calls++;
        if (failing)
        {
            throw new MetadataException("store away (test)");
        }
    }
}
