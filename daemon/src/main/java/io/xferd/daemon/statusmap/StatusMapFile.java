package io.xferd.daemon.statusmap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import net.openhft.chronicle.map.ChronicleMap;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The layout of {@code <dir>/registry.dat}: a Chronicle Map (file-backed, shared between processes) from
 * string keys to JSON objects, written by the daemon's conductor and read by {@code xferd status}.
 * <pre>
 *   daemon                       {"pid", "started_at", "config": {...}}
 *   client/&lt;slot&gt;                {"slot", "segment", "full_name", "pid", "uid", "connected_at", "regions", "registered_bytes"}
 *   region/&lt;slot&gt;/&lt;hex address&gt;  {"slot", "segment", "address", "length", "location"}
 *   nic/&lt;name&gt;                   {"name", "kind", "transport"}
 *   peer/&lt;host:port&gt;             (written by the cross-host transport)
 * </pre>
 */
public final class StatusMapFile
{
    public static final String FILE = "registry.dat";
    public static final String DAEMON_KEY = "daemon";
    public static final String CLIENT_PREFIX = "client/";
    public static final String REGION_PREFIX = "region/";
    public static final String NIC_PREFIX = "nic/";
    public static final String PEER_PREFIX = "peer/";

    static final ObjectMapper JSON = new ObjectMapper();

    static
    {
        // Chronicle must never phone home, whoever opens the map first
        System.setProperty("chronicle.analytics.disable", "true");
    }

    private StatusMapFile()
    {
    }

    static ChronicleMap<String, String> open(final Path file, final long entries)
    {
        try
        {
            return ChronicleMap.of(String.class, String.class)
                .name("xferd-registry")
                .entries(entries)
                .averageKey("region/127/7f0123456789")
                .averageValue("{\"slot\":12,\"segment\":\"prefill-worker-0\",\"address\":140737488355328," +
                    "\"length\":1073741824,\"location\":\"cuda:0\",\"pid\":123456}")
                .maxBloatFactor(8)
                .createPersistedTo(file.toFile());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open the registry " + file, ex);
        }
    }

    /**
     * @return a JSON object of the registry as an ordered, mutable map.
     */
    @SuppressWarnings("unchecked")
    public static java.util.Map<String, Object> asMap(final com.fasterxml.jackson.databind.JsonNode node)
    {
        return JSON.convertValue(node, java.util.LinkedHashMap.class);
    }

    static String json(final Object value)
    {
        try
        {
            return JSON.writeValueAsString(value);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
