package io.xferd.daemon.files;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The modes of everything the daemon creates, set explicitly so they do not depend on the umask it was started
 * with: the daemon's uid owns, its group may connect and watch the heartbeat, others reach nothing.
 */
public final class FileModes
{
    /** The daemon directory and the journal directory: group may enter and list, nobody else. */
    public static final int DIRECTORY = 0750;
    /** {@code xferd.sock}: connecting needs write permission, so the group gets read-write. */
    public static final int SOCKET = 0660;
    /** {@code cnc.dat}, {@code registry.dat}, {@code xferd.lock}: the group reads (status, heartbeat). */
    public static final int GROUP_READABLE = 0640;

    private static final int SETGID = 02000;
    private static final int STICKY = 01000;
    private static final int GROUP_WRITE = 0020;
    private static final String MODE = "unix:mode";

    private FileModes()
    {
    }

    /**
     * Make the daemon's directory {@link #DIRECTORY}, keeping a setgid bit an operator set (so files get the daemon
     * group). A directory whose sticky bit is set ({@code /tmp}, {@code /dev/shm}: shared by everyone) is left
     * alone: it is not the daemon's to restrict, and the files' own modes still hold.
     *
     * @return the directory's mode afterwards.
     */
    public static int restrictDirectory(final Path directory)
    {
        final int mode = mode(directory);
        if ((mode & STICKY) != 0)
        {
            return mode;
        }
        final int restricted = (mode & SETGID) | DIRECTORY;
        set(directory, restricted);
        return restricted;
    }

    /**
     * @return whether members of the directory's group may replace files in it (group-writable, not sticky).
     */
    public static boolean groupCanReplaceFiles(final int directoryMode)
    {
        return (directoryMode & GROUP_WRITE) != 0 && (directoryMode & STICKY) == 0;
    }

    public static void set(final Path file, final int mode)
    {
        try
        {
            Files.setAttribute(file, MODE, mode);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot set mode " + Integer.toOctalString(mode) + " on " + file, ex);
        }
    }

    public static int mode(final Path file)
    {
        try
        {
            return (Integer)Files.getAttribute(file, MODE) & 07777;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read the mode of " + file, ex);
        }
    }
}
