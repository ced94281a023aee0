package io.xferd.daemon.tools.cli;

import io.xferd.daemon.XferDaemon;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;

/**
 * The training run of the JDK's AOT cache (JEP 483/514/515), run by the build under
 * {@code -XX:AOTCacheOutput=daemon/target/xferd.aot}: in one JVM, what an operator starts most often and wants
 * fastest: {@code xferd --help}, {@code xferd status} with and without a daemon, and a daemon from start to
 * serving (its own temporary directory, an ephemeral RPC port, no metrics endpoint), then closed. The classes
 * these load, linked, and their profiles land in the cache that bin/xferd hands every later JVM.
 * <p>
 * {@code --status-cache FILE}: while the daemon serves, a child JVM trains the status tool's own, smaller cache
 * ({@link StatusAotTraining}), which bin/xferd gives {@code xferd status}.
 */
public final class AotTraining
{
    private AotTraining()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        System.setProperty("chronicle.analytics.disable", "true");
        final Path root = Files.createTempDirectory("xferd-aot-training");
        final Path directory = root.resolve("run");
        try
        {
            UsageText.print(new String[]{"--help"}, new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
            run("--help");
            run("status", "--dir", directory.toString());
            final String[] daemonArgs = {"daemon", "--dir", directory.toString(), "--rpc-address", "127.0.0.1:0",
                "--metrics-address", "off"};
            // the launcher's way in, without picocli (DaemonArguments)
            final DaemonCommand daemon = DaemonArguments.parse(daemonArgs);
            final var context = daemon.options.context();
            daemon.operations.applyTo(context.operations());
            try (XferDaemon running = XferDaemon.launch(context))
            {
                run("status", "--dir", directory.toString());
                run("status", "--json", "--dir", directory.toString());
                if (args.length == 2 && "--status-cache".equals(args[0]))
                {
                    final int exit = StatusAotTraining.runChild(Path.of(args[1]), directory, root.resolve("none"));
                    if (exit != 0)
                    {
                        throw new IllegalStateException("the status tool's training run exited with " + exit);
                    }
                }
            }
        }
        finally
        {
            deleteTree(root);
        }
    }

    private static void run(final String... args)
    {
        final CommandLine commandLine = XferdMain.commandLine(args);
        final PrintWriter sink = new PrintWriter(Writer.nullWriter());
        commandLine.setOut(sink);
        commandLine.setErr(sink);
        commandLine.execute(args);
    }

    private static void deleteTree(final Path root) throws IOException
    {
        if (!Files.exists(root))
        {
            return;
        }
        try (var paths = Files.walk(root))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
