package io.xferd.daemon.statusmap;

import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.control.ConductorListener;
import io.xferd.daemon.files.FileModes;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import net.openhft.chronicle.map.ChronicleMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Keeps {@code <dir>/registry.dat} (see {@link StatusMapFile}) in step with the conductor's clients and regions,
 * on the conductor thread (control plane: allocates). A write that fails is logged once and the daemon carries on:
 * the registry is for observers, the daemon never reads it back. Removed on a clean shutdown.
 */
public final class StatusMapWriter implements ConductorListener, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StatusMapWriter.class);

    private final Path file;
    private final ChronicleMap<String, String> map;
    private final Map<Integer, Map<Region, String>> regionKeys = new HashMap<>();
    private final Map<Integer, Long> registeredBytes = new HashMap<>();
    private final Map<Integer, String> connectedAt = new HashMap<>();
    private boolean failedOnce;

    private StatusMapWriter(final Path file, final ChronicleMap<String, String> map)
    {
        this.file = file;
        this.map = map;
    }

    /**
     * Create a fresh registry in the daemon's (claimed) directory, replacing one a crashed daemon left.
     */
    public static StatusMapWriter create(final DaemonContext context, final long pid)
    {
        final Path file = context.directory().resolve(StatusMapFile.FILE);
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            LOG.warn("cannot remove the old registry {}: {}", file, ex.toString());
        }
        final StatusMapWriter writer =
            new StatusMapWriter(file, StatusMapFile.open(file, Math.max(1024, context.maxClients() * 64L)));
        FileModes.set(file, FileModes.GROUP_READABLE);
        final Map<String, Object> daemon = new LinkedHashMap<>();
        daemon.put("pid", pid);
        daemon.put("started_at", Instant.now().toString());
        daemon.put("config", context.describe());
        writer.put(StatusMapFile.DAEMON_KEY, daemon);
        writer.put(StatusMapFile.NIC_PREFIX + "shm", Map.of("name", "shm", "kind", "local",
            "transport", "memcpy between shared mappings"));
        return writer;
    }

    @Override
    public void onClientConnected(final ClientSession session)
    {
        connectedAt.put(session.slot(), Instant.now().toString());
        putClient(session);
    }

    /**
     * One entry written and the client's summary: the cost does not grow with the client's regions.
     */
    @Override
    public void onRegionAdded(final ClientSession session, final Region region)
    {
        putRegion(session, region);
        registeredBytes.merge(session.slot(), region.length(), Long::sum);
        putClient(session);
    }

    @Override
    public void onRegionRemoved(final ClientSession session, final Region region)
    {
        final Map<Region, String> keys = regionKeys.get(session.slot());
        final String key = keys == null ? null : keys.remove(region);
        if (key != null)
        {
            remove(key);
            registeredBytes.merge(session.slot(), -region.length(), Long::sum);
        }
        putClient(session);
    }

    /**
     * The whole table again (a change the conductor did not describe region by region).
     */
    @Override
    public void onRegionsChanged(final ClientSession session)
    {
        removeRegions(session.slot());
        final RegionTable regions = session.regions();
        long bytes = 0;
        for (int i = 0; i < regions.size(); i++)
        {
            putRegion(session, regions.get(i));
            bytes += regions.get(i).length();
        }
        registeredBytes.put(session.slot(), bytes);
        putClient(session);
    }

    private void putRegion(final ClientSession session, final Region region)
    {
        final String key = StatusMapFile.REGION_PREFIX + session.slot() + "/" + Long.toHexString(region.ownerAddress());
        final Map<String, Object> value = new LinkedHashMap<>();
        value.put("slot", session.slot());
        value.put("segment", session.segmentName());
        value.put("address", region.ownerAddress());
        value.put("length", region.length());
        value.put("location", region.location());
        if (region.isFile())
        {
            value.put("storage", region.file().describe());
        }
        put(key, value);
        regionKeys.computeIfAbsent(session.slot(), slot -> new HashMap<>()).put(region, key);
    }

    @Override
    public void onClientDisconnected(final ClientSession session)
    {
        removeRegions(session.slot());
        registeredBytes.remove(session.slot());
        connectedAt.remove(session.slot());
        remove(StatusMapFile.CLIENT_PREFIX + session.slot());
    }

    private void putClient(final ClientSession session)
    {
        final RegionTable regions = session.regions();
        final long bytes = registeredBytes.getOrDefault(session.slot(), 0L);
        final Map<String, Object> value = new LinkedHashMap<>();
        value.put("slot", session.slot());
        value.put("segment", session.segmentName());
        value.put("full_name", new String(session.segmentNameUtf8(), java.nio.charset.StandardCharsets.UTF_8));
        value.put("pid", session.pid());
        value.put("uid", session.uid());
        value.put("connected_at", connectedAt.getOrDefault(session.slot(), ""));
        value.put("regions", regions.size());
        value.put("registered_bytes", bytes);
        put(StatusMapFile.CLIENT_PREFIX + session.slot(), value);
    }

    private void removeRegions(final int slot)
    {
        final Map<Region, String> keys = regionKeys.remove(slot);
        if (keys != null)
        {
            keys.values().forEach(this::remove);
        }
    }

    private void put(final String key, final Object value)
    {
        try
        {
            map.put(key, StatusMapFile.json(value));
        }
        catch (final RuntimeException ex)
        {
            failed(ex);
        }
    }

    private void remove(final String key)
    {
        try
        {
            map.remove(key);
        }
        catch (final RuntimeException ex)
        {
            failed(ex);
        }
    }

    private void failed(final RuntimeException ex)
    {
        if (!failedOnce)
        {
            failedOnce = true;
            LOG.warn("registry {} not updated (status may be incomplete): {}", file, ex.toString());
        }
    }

    @Override
    public void close()
    {
        map.close();
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            LOG.warn("cannot remove {}: {}", file, ex.toString());
        }
    }
}
