package io.xferd.topology;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Mooncake's JSON form of the matrix: one object, a member per location, each an array of exactly two
 * arrays of NIC names (preferred, then available). Written on one line with {@code ": "} and {@code ", "}
 * separators, as Python's {@code json.dumps} writes it.
 */
final class TopologyMatrixJson
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private TopologyMatrixJson()
    {
    }

    static String write(final TopologyMatrix matrix)
    {
        final StringWriter out = new StringWriter();
        try (JsonGenerator json = MAPPER.getFactory().createGenerator(out))
        {
            json.setPrettyPrinter(new SpacedPrinter());
            json.writeStartObject();
            for (final Map.Entry<String, MatrixRow> entry : matrix.rows().entrySet())
            {
                json.writeFieldName(entry.getKey());
                json.writeStartArray();
                writeNames(json, entry.getValue().preferred());
                writeNames(json, entry.getValue().available());
                json.writeEndArray();
            }
            json.writeEndObject();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return out.toString();
    }

    private static void writeNames(final JsonGenerator json, final List<String> names) throws IOException
    {
        json.writeStartArray();
        for (final String name : names)
        {
            json.writeString(name);
        }
        json.writeEndArray();
    }

    static TopologyMatrix read(final String text)
    {
        final JsonNode root;
        try
        {
            root = MAPPER.readTree(text);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalArgumentException("topology matrix is not JSON: " + ex.getOriginalMessage(), ex);
        }
        if (null == root || !root.isObject() || root.isEmpty())
        {
            throw new IllegalArgumentException("topology matrix must be a non-empty JSON object of locations");
        }
        final Map<String, MatrixRow> rows = new LinkedHashMap<>();
        for (final Map.Entry<String, JsonNode> entry : root.properties())
        {
            final JsonNode lists = entry.getValue();
            if (!lists.isArray() || lists.size() != 2)
            {
                throw new IllegalArgumentException(
                    "topology matrix location " + entry.getKey() + " must be [[preferred...], [available...]]");
            }
            rows.put(entry.getKey(), new MatrixRow(
                names(entry.getKey(), lists.get(0)), names(entry.getKey(), lists.get(1))));
        }
        return new TopologyMatrix(rows);
    }

    private static List<String> names(final String location, final JsonNode array)
    {
        if (!array.isArray())
        {
            throw new IllegalArgumentException("topology matrix location " + location + ": NIC list is not an array");
        }
        final List<String> names = new ArrayList<>();
        for (final JsonNode name : array)
        {
            if (!name.isTextual())
            {
                throw new IllegalArgumentException(
                    "topology matrix location " + location + ": NIC name " + name + " is not a string");
            }
            names.add(name.asText());
        }
        return names;
    }

    /** One line, a space after each {@code :} and {@code ,}. */
    private static final class SpacedPrinter extends MinimalPrettyPrinter
    {
        private static final long serialVersionUID = 1L;

        public void writeObjectFieldValueSeparator(final JsonGenerator json) throws IOException
        {
            json.writeRaw(": ");
        }

        public void writeObjectEntrySeparator(final JsonGenerator json) throws IOException
        {
            json.writeRaw(", ");
        }

        public void writeArrayValueSeparator(final JsonGenerator json) throws IOException
        {
            json.writeRaw(", ");
        }
    }
}
