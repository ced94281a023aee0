package io.xferd.daemon.statusmap;

import com.fasterxml.jackson.databind.JsonNode;
import net.openhft.chronicle.map.ChronicleMap;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a daemon's registry file from another process (the map's own locks keep it consistent with the writer);
 * never creates one.
 */
public final class StatusMapReader
{
    private StatusMapReader()
    {
    }

    /**
     * @return every entry, sorted by key, or null when the directory has no registry.
     */
    public static Map<String, JsonNode> read(final Path directory)
    {
        final Path file = directory.resolve(StatusMapFile.FILE);
        if (!Files.exists(file))
        {
            return null;
        }
        final Map<String, JsonNode> entries = new TreeMap<>();
        try (ChronicleMap<String, String> map = StatusMapFile.open(file, 1024))
        {
            map.forEach((key, value) ->
            {
                try
                {
                    entries.put(key, StatusMapFile.JSON.readTree(value));
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            });
        }
        return entries;
    }
}
