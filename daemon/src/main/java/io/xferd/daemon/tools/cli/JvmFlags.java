package io.xferd.daemon.tools.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Properties;

/**
 * The JVM flags every xferd JVM runs with (Chronicle on JDK 25, FFM, Agrona; analytics off), read from the
 * {@code jvm.flags} file at the root of the repository, which the build copies beside this class. bin/xferd and
 * the surefire and failsafe argLine read the same file: there is no other copy of the list.
 */
public final class JvmFlags
{
    /**
     * The name of the resource, beside this class, and of the file at the repository's root.
     */
    public static final String RESOURCE = "jvm.flags";

    /**
     * The one property of the file: the flags, separated by whitespace.
     */
    public static final String PROPERTY = "xferd.jvm.flags";

    public static final List<String> ALL = load();

    private JvmFlags()
    {
    }

    private static List<String> load()
    {
        try (InputStream in = JvmFlags.class.getResourceAsStream(RESOURCE))
        {
            if (in == null)
            {
                throw new IllegalStateException(RESOURCE + " is not on the class path beside " +
                    JvmFlags.class.getName() + ": build the daemon module with Maven");
            }
            return parse(in);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    static List<String> parse(final InputStream in) throws IOException
    {
        final Properties properties = new Properties();
        properties.load(in);
        final String flags = properties.getProperty(PROPERTY);
        if (flags == null || flags.isBlank())
        {
            throw new IllegalStateException(RESOURCE + " has no " + PROPERTY);
        }
        return List.of(flags.trim().split("\\s+"));
    }
}
