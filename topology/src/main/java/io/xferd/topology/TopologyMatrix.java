package io.xferd.topology;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which NICs serve memory at which location, in Mooncake's form: an ordered map from a location
 * ({@code cpu:N} for host memory on NUMA node N, {@code cuda:N} / {@code hip:N} for GPU memory) to a
 * {@link MatrixRow} of preferred and available NIC names. As JSON:
 * <pre>{"cpu:0": [["mlx5_0"], ["mlx5_1"]], "cuda:0": [["mlx5_0"], ["mlx5_1"]]}</pre>
 * <p>
 * A location the matrix does not name (memory whose location the daemon could not tell, or a GPU the
 * matrix file leaves out) is served by the {@code cpu:0} row; when there is no {@code cpu:0} row either,
 * by a row preferring every NIC of the matrix. Immutable.
 */
public final class TopologyMatrix
{
    /** The row a location not in the matrix falls back to. */
    public static final String FALLBACK_LOCATION = "cpu:0";

    private final Map<String, MatrixRow> rows;
    private final MatrixRow fallback;

    /** @param rows by location, in the order to print them. */
    public TopologyMatrix(final Map<String, MatrixRow> rows)
    {
        final Map<String, MatrixRow> copy = new LinkedHashMap<>();
        for (final Map.Entry<String, MatrixRow> entry : rows.entrySet())
        {
            if (null == entry.getKey() || entry.getKey().isEmpty() || null == entry.getValue())
            {
                throw new IllegalArgumentException("topology matrix row without a location or NIC lists");
            }
            copy.put(entry.getKey(), entry.getValue());
        }
        this.rows = Collections.unmodifiableMap(copy);
        final MatrixRow cpu0 = copy.get(FALLBACK_LOCATION);
        this.fallback = null != cpu0 ? cpu0 : new MatrixRow(nicsOf(copy), List.of());
    }

    /** @return the matrix of this host by the rules of {@link TopologyMatrixBuilder} (see the package docs). */
    public static TopologyMatrix build(final HostTopology host)
    {
        return TopologyMatrixBuilder.build(host);
    }

    /**
     * @param json Mooncake's form, {@code {"location": [[preferred...], [available...]], ...}}.
     * @throws IllegalArgumentException naming what is wrong when the text is not in that form.
     */
    public static TopologyMatrix fromJson(final String json)
    {
        return TopologyMatrixJson.read(json);
    }

    /** @return the matrix of a file in Mooncake's JSON form (the config's matrix override). */
    public static TopologyMatrix fromFile(final Path file) throws IOException
    {
        try
        {
            return fromJson(Files.readString(file));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(file + ": " + ex.getMessage(), ex);
        }
    }

    /** @return one line of Mooncake's JSON form, e.g. {@code {"cpu:0": [["mlx5_0"], ["mlx5_1"]]}}. */
    public String toJson()
    {
        return TopologyMatrixJson.write(this);
    }

    /**
     * Keeps only the named NICs (the seeds' {@code device_name} list). A row left with no preferred NIC
     * gets its remaining available NICs as preferred, so a row that names any NIC always prefers one.
     *
     * @param deviceNames NIC names; empty means no filter.
     * @throws IllegalArgumentException naming every name that is not a NIC of this matrix.
     */
    public TopologyMatrix filter(final Set<String> deviceNames)
    {
        if (deviceNames.isEmpty())
        {
            return this;
        }
        final Set<String> unknown = new TreeSet<>(NaturalOrder.INSTANCE);
        final List<String> known = nics();
        for (final String name : deviceNames)
        {
            if (!known.contains(name))
            {
                unknown.add(name);
            }
        }
        if (!unknown.isEmpty())
        {
            throw new IllegalArgumentException(
                "device_name names unknown NIC(s) " + unknown + "; NICs of this host: " + known);
        }
        final Map<String, MatrixRow> filtered = new LinkedHashMap<>();
        for (final Map.Entry<String, MatrixRow> entry : rows.entrySet())
        {
            final List<String> preferred = keep(entry.getValue().preferred(), deviceNames);
            final List<String> available = keep(entry.getValue().available(), deviceNames);
            filtered.put(entry.getKey(), preferred.isEmpty() ?
                new MatrixRow(available, List.of()) : new MatrixRow(preferred, available));
        }
        return new TopologyMatrix(filtered);
    }

    /** @return the row of the location, or the fallback row (see the class docs). */
    public MatrixRow row(final String location)
    {
        final MatrixRow row = rows.get(location);
        return null != row ? row : fallback;
    }

    /** @return true when the matrix has a row of its own for the location. */
    public boolean hasLocation(final String location)
    {
        return rows.containsKey(location);
    }

    public List<String> preferred(final String location)
    {
        return row(location).preferred();
    }

    public List<String> available(final String location)
    {
        return row(location).available();
    }

    /** @return every NIC the matrix names, in order of first appearance. */
    public List<String> nics()
    {
        return nicsOf(rows);
    }

    /** @return the rows by location, in order. */
    public Map<String, MatrixRow> rows()
    {
        return rows;
    }

    private static List<String> nicsOf(final Map<String, MatrixRow> rows)
    {
        final Set<String> names = new LinkedHashSet<>();
        for (final MatrixRow row : rows.values())
        {
            names.addAll(row.preferred());
            names.addAll(row.available());
        }
        return List.copyOf(names);
    }

    private static List<String> keep(final List<String> names, final Set<String> wanted)
    {
        final List<String> kept = new ArrayList<>();
        for (final String name : names)
        {
            if (wanted.contains(name))
            {
                kept.add(name);
            }
        }
        return kept;
    }

    public boolean equals(final Object other)
    {
        return other instanceof TopologyMatrix that && rows.equals(that.rows) &&
            List.copyOf(rows.keySet()).equals(List.copyOf(that.rows.keySet()));
    }

    public int hashCode()
    {
        return rows.hashCode();
    }

    public String toString()
    {
        return toJson();
    }
}
