package io.xferd.daemon.tools.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What the demo's own daemon adds to its directory ({@code cluster.token}, {@code journal/}, {@code xferd.lock}
 * stay after the daemon closes), removed at the end of the run: the whole directory when the demo made it, otherwise
 * only the entries that were not there before, so that a user's {@code --dir} keeps what it held (an entry that was
 * there is kept whole, whatever the daemon wrote into it).
 */
public final class DemoLeftovers
{
    private final Path directory;
    private final boolean existed;
    private final Set<Path> before;

    private DemoLeftovers(final Path directory, final boolean existed, final Set<Path> before)
    {
        this.directory = directory;
        this.existed = existed;
        this.before = before;
    }

    /**
     * What was removed, and what could not be (still there), each an entry of the directory or the directory itself.
     *
     * @param madeByDemo the directory did not exist before the run: it was removed whole (unless it is {@code left})
     */
    public record Removed(boolean madeByDemo, List<Path> removed, List<Path> left)
    {
    }

    /**
     * @return what {@code directory} holds now, before the demo's daemon starts in it.
     */
    public static DemoLeftovers before(final Path directory) throws IOException
    {
        if (!Files.isDirectory(directory))
        {
            return new DemoLeftovers(directory, false, Set.of());
        }
        try (Stream<Path> entries = Files.list(directory))
        {
            return new DemoLeftovers(directory, true, new HashSet<>(entries.toList()));
        }
    }

    /**
     * Remove what was added since {@link #before}: call after the daemon closed.
     */
    public Removed remove() throws IOException
    {
        final List<Path> removed = new ArrayList<>();
        final List<Path> left = new ArrayList<>();
        if (!Files.exists(directory))
        {
            return new Removed(!existed, removed, left);
        }
        if (!existed)
        {
            removeTree(directory, removed, left);
            return new Removed(true, removed, left);
        }
        final List<Path> added;
        try (Stream<Path> entries = Files.list(directory))
        {
            added = entries.filter(entry -> !before.contains(entry)).sorted().toList();
        }
        for (final Path entry : added)
        {
            removeTree(entry, removed, left);
        }
        return new Removed(false, removed, left);
    }

    private static void removeTree(final Path root, final List<Path> removed, final List<Path> left) throws IOException
    {
        final List<Path> paths;
        try (Stream<Path> walk = Files.walk(root))
        {
            paths = walk.sorted(Comparator.reverseOrder()).toList();
        }
        for (final Path path : paths)
        {
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ex)
            {
                // reported as its top entry left (its parents then cannot go either)
            }
        }
        (Files.exists(root) ? left : removed).add(root);
    }
}
