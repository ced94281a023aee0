package io.xferd.daemon.tools.demo;

import io.xferd.daemon.config.ClusterKey;
import io.xferd.ipc.CncFileDescriptor;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * What the demo's own daemon leaves in its directory, removed after that daemon closed: only the daemon's own names
 * ({@link #DAEMON_NAMES}) that were not there before the run, and then the directory itself when the demo made it and
 * nothing else is in it. Nothing else is ever removed, whoever made it: a user's {@code --dir} may be shared with
 * other programs ({@code /tmp}, {@code /dev/shm}) while the demo runs. No link is followed: a name that is a link goes
 * itself, and {@code journal/} is walked without following links.
 */
public final class DemoLeftovers
{
    /** What a daemon makes in its directory; cnc.dat and xferd.sock normally go when it closes. */
    static final List<String> DAEMON_NAMES = List.of(ClusterKey.DEFAULT_FILE_NAME, CncFileDescriptor.CNC_FILE,
        "journal", CncFileDescriptor.LOCK_FILE, CncFileDescriptor.SOCKET_FILE);

    private final Path directory;
    private final boolean existed;
    private final List<String> absent;

    private DemoLeftovers(final Path directory, final boolean existed, final List<String> absent)
    {
        this.directory = directory;
        this.existed = existed;
        this.absent = absent;
    }

    /**
     * What was removed, and what could not be (still there), each a daemon name in the directory or the directory.
     *
     * @param madeByDemo the directory did not exist before the run
     */
    public record Removed(boolean madeByDemo, List<Path> removed, List<Path> left)
    {
    }

    /**
     * @return which of the daemon's names {@code directory} lacks now, before the demo's daemon starts in it.
     * @throws NotDirectoryException it exists and is not a directory (a link, even to a directory, included).
     */
    public static DemoLeftovers before(final Path directory) throws IOException
    {
        if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS))
        {
            return new DemoLeftovers(directory, false, DAEMON_NAMES);
        }
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS))
        {
            throw new NotDirectoryException(directory.toString());
        }
        final List<String> absent = new ArrayList<>();
        for (final String name : DAEMON_NAMES)
        {
            if (!Files.exists(directory.resolve(name), LinkOption.NOFOLLOW_LINKS))
            {
                absent.add(name);
            }
        }
        return new DemoLeftovers(directory, true, List.copyOf(absent));
    }

    /**
     * Remove the daemon's names that were absent at {@link #before}: call after the daemon closed (its lock kept any
     * other daemon out of the directory until then).
     */
    public Removed remove()
    {
        final List<Path> removed = new ArrayList<>();
        final List<Path> left = new ArrayList<>();
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS))
        {
            return new Removed(!existed, removed, left); // gone, or replaced by something not ours
        }
        for (final String name : absent)
        {
            final Path entry = directory.resolve(name);
            if (Files.exists(entry, LinkOption.NOFOLLOW_LINKS))
            {
                (removeTree(entry) ? removed : left).add(entry);
            }
        }
        if (!existed)
        {
            try
            {
                Files.delete(directory);
                removed.add(directory);
            }
            catch (final IOException ex)
            {
                // something else is in it (DirectoryNotEmptyException): it stays with what is not the daemon's
                left.add(directory);
            }
        }
        return new Removed(!existed, removed, left);
    }

    /**
     * @return whether {@code root} is gone: walked without following links, so a link is removed, never what it
     * points at.
     */
    private static boolean removeTree(final Path root)
    {
        try
        {
            Files.walkFileTree(root, new SimpleFileVisitor<>()
            {
                @Override
                public FileVisitResult visitFile(final Path file, final BasicFileAttributes attributes)
                    throws IOException
                {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(final Path file, final IOException ex)
                {
                    return FileVisitResult.CONTINUE; // unreadable: it stays, and so do its parents
                }

                @Override
                public FileVisitResult postVisitDirectory(final Path dir, final IOException ex)
                {
                    try
                    {
                        Files.deleteIfExists(dir);
                    }
                    catch (final IOException notEmptyOrNotOurs)
                    {
                        // something in it could not go, or it is not ours to remove: it stays
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        catch (final IOException ex)
        {
            // reported as left
        }
        return !Files.exists(root, LinkOption.NOFOLLOW_LINKS);
    }
}
