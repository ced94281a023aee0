package io.xferd.topology;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The directory that stands for {@code /sys}: the live one by default, a fake tree in tests.
 * <p>
 * Every read is tolerant: a missing file, an unreadable one (sysfs answers {@code EINVAL} to a read of
 * {@code speed} on a link that is down) or a broken link reads as {@code null} or an empty listing,
 * never as an exception. Paths given to this class are relative to the root, e.g. {@code "class/net"}.
 */
public final class SysfsRoot
{
    /** Where the kernel mounts sysfs. */
    public static final Path DEFAULT_ROOT = Path.of("/sys");

    private final Path root;

    private SysfsRoot(final Path root)
    {
        this.root = Objects.requireNonNull(root, "root").toAbsolutePath().normalize();
    }

    /** @return the live {@code /sys} of this host. */
    public static SysfsRoot system()
    {
        return new SysfsRoot(DEFAULT_ROOT);
    }

    /** @param root a directory laid out like {@code /sys}. */
    public static SysfsRoot of(final Path root)
    {
        return new SysfsRoot(root);
    }

    public Path root()
    {
        return root;
    }

    /** @return true when this is the live {@code /sys}, so host facts sysfs lacks (IP addresses) may be asked of the OS. */
    public boolean isLive()
    {
        return root.equals(DEFAULT_ROOT);
    }

    /** @param relative a path below the root such as {@code "class/net/eth0/speed"}. */
    public Path resolve(final String relative)
    {
        return root.resolve(relative);
    }

    /** @return the trimmed content of the file, or null when it is missing or unreadable. */
    public static String readText(final Path file)
    {
        try
        {
            return Files.readString(file).trim();
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }

    public String readText(final String relative)
    {
        return readText(resolve(relative));
    }

    /** @return the file parsed as a decimal or {@code 0x} hex long, or {@code fallback} when missing or not a number. */
    public static long readLong(final Path file, final long fallback)
    {
        final String text = readText(file);
        if (null == text || text.isEmpty())
        {
            return fallback;
        }
        try
        {
            return text.startsWith("0x") || text.startsWith("0X") ?
                Long.parseLong(text.substring(2), 16) : Long.parseLong(text);
        }
        catch (final NumberFormatException ex)
        {
            return fallback;
        }
    }

    /** @return the names of the entries of a directory in plain string order, empty when it is missing. */
    public static List<String> list(final Path dir)
    {
        final List<String> names = new ArrayList<>();
        if (!Files.isDirectory(dir))
        {
            return names;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir))
        {
            for (final Path entry : stream)
            {
                names.add(entry.getFileName().toString());
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            return new ArrayList<>();
        }
        names.sort(null);
        return names;
    }

    public List<String> list(final String relative)
    {
        return list(resolve(relative));
    }

    /** @return the path with every symlink resolved, or null when it does not exist (or a link is broken). */
    public static Path realPath(final Path path)
    {
        try
        {
            return path.toRealPath();
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }

    public String toString()
    {
        return root.toString();
    }
}
