package io.xferd.daemon.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One field of a config file with where its value starts, read as the type the field needs; a value of the
 * wrong type is a {@link ConfigException} naming the file, line, column and field.
 */
final class ConfigValue
{
    private final Path file;
    private final String name;
    private final JsonNode node;
    private final JsonLocation location;

    ConfigValue(final Path file, final String name, final JsonNode node, final JsonLocation location)
    {
        this.file = file;
        this.name = name;
        this.node = node;
        this.location = location;
    }

    String name()
    {
        return name;
    }

    Path file()
    {
        return file;
    }

    String text()
    {
        if (!node.isTextual())
        {
            throw wrongType("a string");
        }
        return node.textValue();
    }

    String nonEmptyText()
    {
        final String text = text().trim();
        if (text.isEmpty())
        {
            throw error("must not be empty");
        }
        return text;
    }

    String lowerCaseText()
    {
        return nonEmptyText().toLowerCase(Locale.ROOT);
    }

    /**
     * @return the number, or {@code autoValue} when the value is the text "auto".
     */
    int intOrAuto(final int autoValue)
    {
        if (node.isTextual() && "auto".equalsIgnoreCase(node.textValue().trim()))
        {
            return autoValue;
        }
        if (!node.isIntegralNumber() || !node.canConvertToInt())
        {
            throw error("must be a whole number or \"auto\", not " + describe(node));
        }
        return node.intValue();
    }

    int intValue()
    {
        if (!node.isIntegralNumber() || !node.canConvertToInt())
        {
            throw wrongType("an integer");
        }
        return node.intValue();
    }

    long longValue()
    {
        if (!node.isIntegralNumber() || !node.canConvertToLong())
        {
            throw wrongType("an integer");
        }
        return node.longValue();
    }

    /**
     * A JSON boolean (true/false; not a string or a number).
     */
    boolean bool()
    {
        if (!node.isBoolean())
        {
            throw wrongType("true or false");
        }
        return node.booleanValue();
    }

    /**
     * A byte count: an integer, or a string with a binary unit ({@link Sizes}).
     */
    long bytes()
    {
        if (node.isIntegralNumber() && node.canConvertToLong())
        {
            return node.longValue();
        }
        if (!node.isTextual())
        {
            throw wrongType("a size (bytes, or a string such as \"512KiB\")");
        }
        try
        {
            return Sizes.parseBytes(node.textValue());
        }
        catch (final IllegalArgumentException ex)
        {
            throw error(ex.getMessage());
        }
    }

    String hostPort()
    {
        final String text = nonEmptyText();
        if (!HostPort.isValid(text))
        {
            throw error("must be host:port with a port 0..65535: " + text);
        }
        return text;
    }

    /**
     * A comma-separated string ({@code "mlx5_0,mlx5_1"}, Mooncake's form) or an array of strings.
     */
    List<String> names()
    {
        final List<String> names = new ArrayList<>();
        if (node.isTextual())
        {
            for (final String part : node.textValue().split(","))
            {
                if (!part.isBlank())
                {
                    names.add(part.trim());
                }
            }
            return names;
        }
        if (!node.isArray())
        {
            throw wrongType("a comma-separated string or an array of strings");
        }
        for (final JsonNode element : node)
        {
            if (!element.isTextual() || element.textValue().isBlank())
            {
                throw wrongType("a comma-separated string or an array of strings");
            }
            names.add(element.textValue().trim());
        }
        return names;
    }

    /**
     * @return an array of uids or gids: integers 0..2^31-1.
     */
    int[] ids()
    {
        if (!node.isArray())
        {
            throw wrongType("an array of numeric ids");
        }
        final int[] ids = new int[node.size()];
        int i = 0;
        for (final JsonNode element : node)
        {
            if (!element.isIntegralNumber() || !element.canConvertToInt() || element.intValue() < 0)
            {
                throw wrongType("an array of numeric ids");
            }
            ids[i++] = element.intValue();
        }
        return ids;
    }

    /**
     * {@code {"segment name": {"uids": [1001], "gids": [2000]}, ...}}; either list may be left out.
     *
     * @return by segment name: {uids, gids}.
     */
    java.util.Map<String, int[][]> segmentGrants()
    {
        if (!node.isObject())
        {
            throw wrongType("an object: segment name -> {\"uids\": [...], \"gids\": [...]}");
        }
        final java.util.Map<String, int[][]> grants = new java.util.TreeMap<>();
        for (final var entry : node.properties())
        {
            final JsonNode grant = entry.getValue();
            if (entry.getKey().isEmpty() || !grant.isObject())
            {
                throw wrongType("an object: segment name -> {\"uids\": [...], \"gids\": [...]}");
            }
            for (final var field : grant.properties())
            {
                if (!field.getKey().equals("uids") && !field.getKey().equals("gids"))
                {
                    throw error("segment " + entry.getKey() + ": unknown field " + field.getKey() +
                        " (uids and gids are known)");
                }
            }
            final String prefix = name + "." + entry.getKey() + ".";
            grants.put(entry.getKey(), new int[][]{
                grant.has("uids") ? new ConfigValue(file, prefix + "uids", grant.get("uids"), location).ids() :
                    new int[0],
                grant.has("gids") ? new ConfigValue(file, prefix + "gids", grant.get("gids"), location).ids() :
                    new int[0]});
        }
        return grants;
    }

    private static final java.util.Set<String> STORAGE_SEGMENT_FIELDS =
        java.util.Set.of("path", "offset", "size", "direct", "sync", "uids", "gids");

    /**
     * {@code storage_segments}: segment name -> {"path": ..., "offset": bytes, "size": bytes, "direct": bool,
     * "sync": bool, "uids": [...], "gids": [...]}; path and size required. Nothing is opened here.
     */
    java.util.List<StorageSegmentConfig> storageSegments()
    {
        final String shape = "an object: segment name -> {\"path\": ..., \"size\": ..., \"offset\", \"direct\", " +
            "\"sync\", \"uids\", \"gids\"}";
        if (!node.isObject())
        {
            throw wrongType(shape);
        }
        if (node.size() > StorageSegmentConfig.MAX_SEGMENTS)
        {
            throw error("at most " + StorageSegmentConfig.MAX_SEGMENTS + " storage segments, got " + node.size());
        }
        final java.util.List<StorageSegmentConfig> segments = new java.util.ArrayList<>();
        for (final var entry : node.properties())
        {
            final String segment = entry.getKey();
            final JsonNode fields = entry.getValue();
            if (segment.isEmpty() || segment.length() > 255 || segment.indexOf('/') >= 0 ||
                !segment.chars().allMatch(c -> c > 0x20 && c < 0x7F))
            {
                throw error("segment name \"" + segment + "\" must be 1..255 printable ASCII characters without '/'");
            }
            if (!fields.isObject())
            {
                throw error("segment " + segment + " must be " + shape);
            }
            for (final var field : fields.properties())
            {
                if (!STORAGE_SEGMENT_FIELDS.contains(field.getKey()))
                {
                    throw error("segment " + segment + ": unknown field " + field.getKey() + " (known: " +
                        new java.util.TreeSet<>(STORAGE_SEGMENT_FIELDS) + ")");
                }
            }
            final String prefix = name + "." + segment + ".";
            if (!fields.has("path") || !fields.has("size"))
            {
                throw error("segment " + segment + " needs \"path\" and \"size\"");
            }
            final Path path = child(prefix, "path", fields).path();
            final long size = child(prefix, "size", fields).bytes();
            final long offset = fields.has("offset") ? child(prefix, "offset", fields).bytes() : 0;
            if (size <= 0)
            {
                throw child(prefix, "size", fields).error("must be positive");
            }
            if (offset < 0 || offset + size < offset)
            {
                throw child(prefix, "offset", fields).error("must be 0 or more, with offset + size in range");
            }
            final boolean direct = !fields.has("direct") || child(prefix, "direct", fields).bool();
            final boolean sync = fields.has("sync") && child(prefix, "sync", fields).bool();
            final int[] uids = fields.has("uids") ? child(prefix, "uids", fields).ids() : new int[0];
            final int[] gids = fields.has("gids") ? child(prefix, "gids", fields).ids() : new int[0];
            segments.add(new StorageSegmentConfig(segment, path, offset, size, direct, sync, uids, gids));
        }
        return java.util.List.copyOf(segments);
    }

    private ConfigValue child(final String prefix, final String field, final JsonNode fields)
    {
        return new ConfigValue(file, prefix + field, fields.get(field), location);
    }

    /**
     * For fields that are accepted and not used: any string or number.
     */
    void requireScalar()
    {
        if (!node.isTextual() && !node.isNumber())
        {
            throw wrongType("a string or a number");
        }
    }

    /**
     * A path; relative paths are taken from the config file's directory.
     */
    Path path()
    {
        final Path path = Path.of(nonEmptyText());
        final Path parent = file.toAbsolutePath().getParent();
        return path.isAbsolute() || parent == null ? path : parent.resolve(path).normalize();
    }

    ConfigException error(final String message)
    {
        return new ConfigException(where() + name + " " + message);
    }

    /**
     * A check of the value that failed elsewhere (e.g. in {@code DaemonContext.conclude()}), placed in the file.
     */
    ConfigException rejected(final String message)
    {
        return new ConfigException(where() + name + ": " + message);
    }

    private ConfigException wrongType(final String expected)
    {
        return error("must be " + expected + ", got " + describe(node));
    }

    private String where()
    {
        return where(file, location);
    }

    static String where(final Path file, final JsonLocation location)
    {
        return location == null ? file + ": " :
            file + ": line " + location.getLineNr() + ", column " + location.getColumnNr() + ": ";
    }

    private static String describe(final JsonNode node)
    {
        final String type = node.getNodeType().name().toLowerCase(Locale.ROOT);
        if (node.isContainerNode())
        {
            return "an " + (node.isArray() ? "array" : type);
        }
        final String text = node.toString();
        return type + " " + (text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }
}
