package io.xferd.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The prefill and decode pools and how their membership changes at run time: from the command line at start, from
 * the config file at start and on every reload, and from the admin endpoint.
 *
 * <p>The config file is JSON: {@code {"prefill": ["http://10.0.0.2:8010"], "decode": ["http://10.0.0.4:8020"]}}.
 * A reload makes the file's backends exactly those listed; backends from the command line or the admin endpoint
 * are left alone. A file that does not parse changes nothing.
 */
public final class Backends
{
    private static final Logger LOG = LoggerFactory.getLogger(Backends.class);

    private final BackendPool prefill = new BackendPool(BackendRole.PREFILL);
    private final BackendPool decode = new BackendPool(BackendRole.DECODE);
    private final ProxyContext context;
    private final ObjectMapper json;

    public Backends(final ProxyContext context, final ObjectMapper json)
    {
        this.context = context;
        this.json = json;
    }

    public BackendPool pool(final BackendRole role)
    {
        return role == BackendRole.PREFILL ? prefill : decode;
    }

    public List<BackendPool> pools()
    {
        return List.of(prefill, decode);
    }

    /**
     * @return the backend at that URL now in the pool (an existing one is kept as it is).
     * @throws IllegalArgumentException for a URL that is not a usable backend address.
     */
    public Backend add(final BackendRole role, final String url, final BackendSource source)
    {
        final Backend backend = new Backend(BackendAddress.parse(url), role, source, context.failuresToEject(),
            TimeUnit.MILLISECONDS.toNanos(context.minEjectMs()));
        final Backend added = pool(role).add(backend);
        if (added == backend)
        {
            LOG.info("{} added ({})", added, source);
        }
        return added;
    }

    /**
     * @return the removed backend, null if that role has none at that URL.
     */
    public Backend remove(final BackendRole role, final String url)
    {
        final Backend removed = pool(role).remove(BackendAddress.parse(url).url());
        if (removed != null)
        {
            LOG.info("{} removed", removed);
        }
        return removed;
    }

    /**
     * Reads the config file and makes its backends the file-sourced members of the pools.
     *
     * @throws IOException              when the file cannot be read.
     * @throws IllegalArgumentException when it is not the expected JSON, with nothing changed.
     */
    public void applyFile(final Path file) throws IOException
    {
        final JsonNode root;
        try
        {
            root = json.readTree(Files.readAllBytes(file));
        }
        catch (final com.fasterxml.jackson.core.JacksonException ex)
        {
            throw new IllegalArgumentException(file + " is not JSON: " + ex.getOriginalMessage());
        }
        if (root == null || !root.isObject())
        {
            throw new IllegalArgumentException(file + " must hold a JSON object with prefill and decode lists");
        }
        final Set<String> wantedPrefill = urls(root, "prefill", file);
        final Set<String> wantedDecode = urls(root, "decode", file);
        reconcile(BackendRole.PREFILL, wantedPrefill);
        reconcile(BackendRole.DECODE, wantedDecode);
    }

    private Set<String> urls(final JsonNode root, final String field, final Path file)
    {
        final JsonNode list = root.get(field);
        final Set<String> urls = new LinkedHashSet<>();
        if (list == null)
        {
            return urls;
        }
        if (!list.isArray())
        {
            throw new IllegalArgumentException(file + ": " + field + " must be a list of URLs");
        }
        for (final JsonNode entry : list)
        {
            if (!entry.isTextual())
            {
                throw new IllegalArgumentException(file + ": " + field + " must be a list of URLs");
            }
            urls.add(BackendAddress.parse(entry.asText()).url());
        }
        return urls;
    }

    private void reconcile(final BackendRole role, final Set<String> wanted)
    {
        final BackendPool pool = pool(role);
        for (final String url : new ArrayList<>(pool.urlsFrom(BackendSource.FILE)))
        {
            if (!wanted.contains(url))
            {
                remove(role, url);
            }
        }
        for (final String url : wanted)
        {
            add(role, url, BackendSource.FILE);
        }
    }

    /**
     * @return every backend with its state, as the admin endpoint shows it.
     */
    public ObjectNode describe()
    {
        final ObjectNode root = json.createObjectNode();
        for (final BackendPool pool : pools())
        {
            final ArrayNode list = root.putArray(pool.role().label());
            for (final Backend backend : pool.members())
            {
                final ObjectNode entry = list.addObject();
                entry.put("url", backend.address().url());
                entry.put("healthy", backend.isHealthy());
                entry.put("outstanding_requests", backend.outstandingRequests());
                entry.put("outstanding_tokens", backend.outstandingTokens());
                entry.put("source", backend.source().name().toLowerCase(java.util.Locale.ROOT));
                entry.put("last_failure", backend.lastFailure());
            }
        }
        return root;
    }
}
