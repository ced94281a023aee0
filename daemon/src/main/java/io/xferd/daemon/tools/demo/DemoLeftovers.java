package io.xferd.daemon.tools.demo;

import io.xferd.daemon.config.ClusterKey;
import io.xferd.ipc.CncFileDescriptor;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;

/**
 * What the demo's own daemon leaves in its directory, removed after that daemon closed: only the daemon's own names
 * ({@link #DAEMON_NAMES}) that were not there before the run, and then the directory itself when the demo made it and
 * nothing else is in it. Nothing else is ever removed, whoever made it: a user's {@code --dir} may be shared with
 * other programs ({@code /tmp}, {@code /dev/shm}) while the demo runs. No link is followed: a name that is a link goes
 * itself, and {@code journal/} is walked without following links, and only when it is the demo user's and nobody else
 * may write in it. All of it happens while holding {@code xferd.lock}: a daemon that claimed the directory since the
 * demo's closed keeps all its files.
 */
public final class DemoLeftovers
{
    /** What a daemon makes in its directory; cnc.dat and xferd.sock normally go when it closes. */
    static final List<String> DAEMON_NAMES = List.of(ClusterKey.DEFAULT_FILE_NAME, CncFileDescriptor.CNC_FILE,
        "journal", CncFileDescriptor.LOCK_FILE, CncFileDescriptor.SOCKET_FILE);

    /** A sticky bit, or write permission for the group or others: then the tree may be someone else's to swap. */
    private static final int SHARED_MODE_BITS = 01022;

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
     * @param locked why nothing was removed: the lock file could not be held (another daemon holds it, or it is not
     * there or not a file); {@code null} when it was held
     */
    public record Removed(boolean madeByDemo, List<Path> removed, List<Path> left, String locked)
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
     * Remove the daemon's names that were absent at {@link #before}: call after the daemon closed. First takes
     * {@code xferd.lock} (never following a link): when another process or channel holds it, a daemon claimed the
     * directory after the demo's closed, and nothing is removed. The lock file goes last, before its lock is released.
     */
    public Removed remove()
    {
        final List<Path> removed = new ArrayList<>();
        final List<Path> left = new ArrayList<>();
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS))
        {
            return new Removed(!existed, removed, left, null); // gone, or replaced by something not ours
        }
        final Path lockFile = directory.resolve(CncFileDescriptor.LOCK_FILE);
        // read-write: opening a FIFO put in its place does not block
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS))
        {
            if (!Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS))
            {
                return new Removed(!existed, removed, left, lockFile + " is not a file");
            }
            final FileLock lock = tryLock(channel);
            if (lock == null)
            {
                return new Removed(!existed, removed, left, "another process holds " + lockFile);
            }
            try
            {
                removeNames(removed, left);
            }
            finally
            {
                lock.release();
            }
        }
        catch (final IOException ex)
        {
            return new Removed(!existed, removed, left, "cannot lock " + lockFile + ": " + ex);
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
        return new Removed(!existed, removed, left, null);
    }

    /** Holding the lock: the other names first, the lock file last. */
    private void removeNames(final List<Path> removed, final List<Path> left)
    {
        final List<String> lockLast = new ArrayList<>(absent);
        if (lockLast.remove(CncFileDescriptor.LOCK_FILE))
        {
            lockLast.add(CncFileDescriptor.LOCK_FILE);
        }
        for (final String name : lockLast)
        {
            final Path entry = directory.resolve(name);
            if (Files.exists(entry, LinkOption.NOFOLLOW_LINKS))
            {
                (removable(entry) && removeTree(entry) ? removed : left).add(entry);
            }
        }
    }

    private static FileLock tryLock(final FileChannel channel) throws IOException
    {
        try
        {
            return channel.tryLock();
        }
        catch (final OverlappingFileLockException ex)
        {
            return null; // held by another channel in this process: a daemon in it still has the directory
        }
    }

    /**
     * @return whether {@code entry} may go: a directory only when the demo's user owns it and nobody else may write in
     * it (no sticky bit, not group- or other-writable), as otherwise another user could swap what is inside for links
     * during the walk; anything else is one name, unlinked without following it.
     */
    private static boolean removable(final Path entry)
    {
        if (!Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS))
        {
            return true;
        }
        try
        {
            final UserPrincipal user = Files.getOwner(Path.of("/proc/self")); // this process's user
            final int mode = (Integer)Files.getAttribute(entry, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return user.equals(Files.getOwner(entry, LinkOption.NOFOLLOW_LINKS)) && (mode & SHARED_MODE_BITS) == 0;
        }
        catch (final IOException | RuntimeException ex)
        {
            return false; // cannot tell: it stays
        }
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
