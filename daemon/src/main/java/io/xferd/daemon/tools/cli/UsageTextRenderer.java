package io.xferd.daemon.tools.cli;

import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Renders the help texts {@link UsageText} prints, with picocli, from the command line {@link XferdMain} runs. The
 * build runs {@link #main} at {@code process-classes}; {@code UsageTextTest} renders them again and compares.
 */
public final class UsageTextRenderer
{
    private UsageTextRenderer()
    {
    }

    /**
     * @return what picocli prints for {@code [command] --help}.
     */
    static String render(final String command, final Ansi ansi)
    {
        final String[] args = command.isEmpty() ? new String[]{"--help"} : new String[]{command, "--help"};
        final CommandLine commandLine = XferdMain.commandLine(args);
        commandLine.setColorScheme(CommandLine.Help.defaultColorScheme(ansi));
        final StringWriter out = new StringWriter();
        commandLine.setOut(new PrintWriter(out));
        final int exitCode = commandLine.execute(args);
        if (exitCode != 0)
        {
            throw new IllegalStateException(String.join(" ", args) + " exited " + exitCode);
        }
        return out.toString();
    }

    /**
     * @return picocli's own choice, for a terminal.
     */
    static boolean ansiEnabled()
    {
        return Ansi.AUTO.enabled();
    }

    /**
     * The build's step: write every pre-rendered text under the classes directory given.
     */
    public static void main(final String[] args) throws IOException
    {
        final Path classes = Path.of(args[0]);
        for (final String command : UsageText.PRE_RENDERED)
        {
            for (final boolean ansi : new boolean[]{false, true})
            {
                final Path file = classes.resolve(UsageText.class.getPackageName().replace('.', '/'))
                    .resolve(UsageText.resource(command, ansi));
                Files.createDirectories(file.getParent());
                Files.writeString(file, render(command, ansi ? Ansi.ON : Ansi.OFF), StandardCharsets.UTF_8);
            }
        }
    }
}
