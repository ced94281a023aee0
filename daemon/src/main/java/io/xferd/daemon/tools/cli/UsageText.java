package io.xferd.daemon.tools.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The help texts, rendered by picocli from the full model at build time ({@link UsageTextRenderer}, an exec step at
 * {@code process-classes}) into resources that {@link XferdLauncher} prints as they are: {@code xferd --help} then
 * loads no picocli class at all (picocli's Java 5 class files cannot go into the AOT cache, and finding them opens
 * the jars of the class path one by one). Plain and ANSI variants: where picocli might colour (a terminal, or
 * colour forced), picocli's own {@code Ansi.AUTO} chooses; elsewhere its choice on Linux is plain. No picocli type
 * appears here. {@code UsageTextTest} fails when a resource is not byte for byte what picocli renders. Arguments that
 * ask anything else, or a jar built without the resources, go through picocli as before.
 */
final class UsageText
{
    /**
     * The commands whose help is rendered ahead ("" is {@code xferd} itself). Left out: those whose usage shows a
     * default that differs from run to run or host to host (bench-target's name has the pid, demo's seed the
     * time, proxy's event loops the CPU count).
     */
    static final List<String> PRE_RENDERED = List.of("", "daemon", "config", "status", "topology", "bench", "profile",
        "metadata-server", "bench-proxy");

    private UsageText()
    {
    }

    /**
     * @return the command whose help these arguments ask for and nothing else ("" for {@code xferd} itself), or null.
     */
    static String helpAskedFor(final String[] args)
    {
        if (args.length == 0 || args.length == 1 && isHelp(args[0]))
        {
            return "";
        }
        if (args.length == 2 && isHelp(args[1]) && !args[0].isEmpty() && PRE_RENDERED.contains(args[0]))
        {
            return args[0];
        }
        return null;
    }

    private static boolean isHelp(final String arg)
    {
        return "--help".equals(arg) || "-h".equals(arg);
    }

    static String resource(final String command, final boolean ansi)
    {
        // String.concat, not +: an indy string concatenation costs this short run a method-handle bootstrap
        return "usage/".concat(command.isEmpty() ? "xferd" : command).concat(ansi ? ".ansi.txt" : ".txt");
    }

    /**
     * Print the pre-rendered help these arguments ask for.
     *
     * @return false when they ask for something else or the resource is not there (picocli answers then).
     */
    static boolean print(final String[] args, final PrintStream out)
    {
        final String command = helpAskedFor(args);
        if (command == null)
        {
            return false;
        }
        final byte[] text = read(resource(command, ansi()));
        if (text == null)
        {
            return false;
        }
        out.write(text, 0, text.length);
        out.flush();
        return true;
    }

    /**
     * The resource, read from the jar (or classes directory) this class came from: the JDK shares the jar's open
     * file with the class loader, where {@code getResourceAsStream} would open it again through a URL connection.
     *
     * @return its bytes, or null when it is not there.
     */
    static byte[] read(final String name)
    {
        final String entry = UsageText.class.getPackageName().replace('.', '/').concat("/").concat(name);
        try
        {
            final Path origin = Path.of(UsageText.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isDirectory(origin))
            {
                final Path file = origin.resolve(entry);
                return Files.exists(file) ? Files.readAllBytes(file) : null;
            }
            try (ZipFile jar = new ZipFile(origin.toFile()))
            {
                final ZipEntry found = jar.getEntry(entry);
                if (found == null)
                {
                    return null;
                }
                try (InputStream in = jar.getInputStream(found))
                {
                    return in.readAllBytes();
                }
            }
        }
        catch (final IOException | URISyntaxException | RuntimeException ex)
        {
            return null;
        }
    }

    /**
     * @return whether picocli would colour the help. Plain, without asking picocli, when stdout is not a terminal
     * (picocli colours only where {@code System.console()} is a terminal, which needs stdout to be one, or where
     * colour is forced); otherwise picocli's {@code Ansi.AUTO} decides (its classes load).
     */
    private static boolean ansi()
    {
        final boolean forced = System.getProperty("picocli.ansi") != null || System.getenv("CLICOLOR_FORCE") != null;
        return (forced || stdoutMayBeATerminal()) && UsageTextRenderer.ansiEnabled();
    }

    private static boolean stdoutMayBeATerminal()
    {
        try
        {
            final String target = Files.readSymbolicLink(Path.of("/proc/self/fd/1")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        }
        catch (final IOException | RuntimeException ex)
        {
            return true; // no /proc: let picocli look
        }
    }
}
