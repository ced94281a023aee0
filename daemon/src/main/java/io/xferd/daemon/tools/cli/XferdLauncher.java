package io.xferd.daemon.tools.cli;

import io.xferd.daemon.config.DaemonContext;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * {@code bin/xferd}'s main class: a help request the build rendered ahead ({@link UsageText}) is printed, and
 * {@code xferd status [--dir D] [--json]} in its plain forms is run, without picocli (its model of the command was
 * most of what status cost); everything else goes to {@link XferdMain}. Nothing here names a picocli type: the
 * launcher resolves every type in the main class's method signatures before it calls main.
 */
public final class XferdLauncher
{
    private XferdLauncher()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (UsageText.print(args, System.out))
        {
            System.exit(0);
        }
        final StatusArguments status = StatusArguments.parse(args);
        if (status != null)
        {
            // stdout's charset, as picocli's writer has it
            final PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, System.out.charset()));
            System.exit(StatusCommand.print(status.directory(), status.json(), out));
        }
        XferdMain.main(args);
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
