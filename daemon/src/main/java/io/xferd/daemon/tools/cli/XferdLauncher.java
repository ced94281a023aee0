package io.xferd.daemon.tools.cli;

import io.xferd.daemon.config.DaemonContext;

import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * {@code bin/xferd}'s main class: a help request the build rendered ahead ({@link UsageText}) is printed,
 * {@code xferd status [--dir D] [--json]} in its plain forms is run, and {@code xferd daemon} with options it is sure
 * of ({@link DaemonArguments}) is started, without picocli (its model of the command was most of what status cost,
 * and the largest part of a daemon's start that the AOT cache cannot hold); everything else goes to
 * {@link XferdMain}. Nothing here names a picocli type: the
 * launcher resolves every type in the main class's method signatures before it calls main.
 */
public final class XferdLauncher
{
    private XferdLauncher()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final int exitCode = runWithoutPicocli(args, System.out);
        if (exitCode >= 0)
        {
            exit(exitCode);
        }
        final DaemonCommand daemon = DaemonArguments.parse(args);
        if (daemon != null)
        {
            // as XferdMain does: Chronicle must never phone home
            System.setProperty("chronicle.analytics.disable", "true");
            System.exit(callDaemon(daemon));
        }
        XferdMain.main(args);
    }

    /**
     * @return the daemon's exit code; as picocli's execute: a stack trace and 1 for an exception the command does
     * not answer itself (so that System.exit ends the JVM whatever threads the failed start left).
     */
    static int callDaemon(final DaemonCommand daemon)
    {
        try
        {
            return daemon.call();
        }
        catch (final RuntimeException | Error ex)
        {
            ex.printStackTrace();
            return 1;
        }
    }

    /**
     * Answer a help request or a plain status command line (what the status tool's AOT cache is trained on).
     *
     * @return the exit code, or -1 when picocli has to answer these arguments.
     */
    static int runWithoutPicocli(final String[] args, final PrintStream stdout) throws java.io.IOException
    {
        if (UsageText.print(args, stdout))
        {
            return 0;
        }
        final StatusArguments status = StatusArguments.parse(args);
        if (status == null)
        {
            return -1;
        }
        // stdout's charset, as picocli's writer has it
        final PrintWriter out = new PrintWriter(new OutputStreamWriter(stdout, stdout.charset()));
        return StatusCommand.print(status.directory(), status.json(), out);
    }

    /**
     * End a help or status run once its output is flushed. Not System.exit: it logs the exit through a
     * System.Logger, whose first use looks for a LoggerFinder service in every jar of the class path (opening
     * ~90 jars that help and status never read otherwise: ~0.1 s of a status run at load). These runs start no
     * thread and register no shutdown hook, so halting skips nothing.
     */
    static void exit(final int status)
    {
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }

    /**
     * {@code status} followed by {@code --json} and {@code --dir D} (or {@code --dir=D}), each at most once, in
     * any order; anything else (help, version, an unknown option, a value that looks like an option) is null and
     * left to picocli, which answers it as before.
     */
    record StatusArguments(Path directory, boolean json)
    {
        static StatusArguments parse(final String[] args)
        {
            if (args.length == 0 || !"status".equals(args[0]))
            {
                return null;
            }
            String directory = null;
            boolean json = false;
            for (int i = 1; i < args.length; i++)
            {
                final String arg = args[i];
                if ("--json".equals(arg) && !json)
                {
                    json = true;
                }
                else if ("--dir".equals(arg) && directory == null && i + 1 < args.length &&
                    !args[i + 1].startsWith("-") && !args[i + 1].isEmpty())
                {
                    directory = args[++i];
                }
                else if (arg.startsWith("--dir=") && directory == null && arg.length() > "--dir=".length())
                {
                    directory = arg.substring("--dir=".length());
                }
                else
                {
                    return null;
                }
            }
            return new StatusArguments(directory != null ? Path.of(directory) : DaemonContext.DEFAULT_DIRECTORY, json);
        }
    }
}
