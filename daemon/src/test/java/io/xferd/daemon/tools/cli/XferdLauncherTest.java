package io.xferd.daemon.tools.cli;

import io.xferd.daemon.config.DaemonContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's short cut for {@code xferd status}: only the plain forms take it, and they print and exit as the
 * picocli command does.
 */
class XferdLauncherTest
{
    @Test
    void shouldTakeOnlyThePlainFormsOfStatus()
    {
        assertThat(parse("status")).isEqualTo(new XferdLauncher.StatusArguments(DaemonContext.DEFAULT_DIRECTORY, false));
        assertThat(parse("status", "--json", "--dir", "/run/x"))
            .isEqualTo(new XferdLauncher.StatusArguments(Path.of("/run/x"), true));
        assertThat(parse("status", "--dir=/run/y")).isEqualTo(new XferdLauncher.StatusArguments(Path.of("/run/y"), false));
        for (final String[] other : new String[][]{{}, {"daemon"}, {"status", "--help"}, {"status", "-V"},
            {"status", "--dir"}, {"status", "--dir", "--json"}, {"status", "--json", "--json"},
            {"status", "--dir", "a", "--dir", "b"}, {"status", "--dir="}, {"status", "extra"}, {"status", "--jsn"}})
        {
            assertThat(XferdLauncher.StatusArguments.parse(other)).as(String.join(" ", other)).isNull();
        }
    }

    @Test
    void shouldPrintAndExitAsThePicocliCommandDoes(@TempDir final Path directory) throws Exception
    {
        for (final boolean json : new boolean[]{false, true})
        {
            final String[] args = json ? new String[]{"status", "--json", "--dir", directory.toString()} :
                new String[]{"status", "--dir", directory.toString()};
            final StringWriter viaPicocli = new StringWriter();
            final CommandLine commandLine = XferdMain.commandLine(args);
            commandLine.setOut(new PrintWriter(viaPicocli));
            final int picocliExit = commandLine.execute(args);

            final StringWriter direct = new StringWriter();
            final XferdLauncher.StatusArguments parsed = XferdLauncher.StatusArguments.parse(args);
            final int directExit = StatusCommand.print(parsed.directory(), parsed.json(), new PrintWriter(direct));

            assertThat(directExit).isEqualTo(picocliExit).isEqualTo(1);
            assertThat(direct.toString()).isEqualTo(viaPicocli.toString()).contains("no xferd daemon in " + directory);
        }
    }

    @Test
    void shouldExitWith1AsPicocliDoesWhenTheDaemonCommandThrowsWhatItDoesNotAnswer()
    {
        final DaemonCommand broken = new DaemonCommand(); // no options: call() meets a NullPointerException
        final java.io.PrintStream err = System.err;
        final java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true));
        try
        {
            assertThat(XferdLauncher.callDaemon(broken)).isEqualTo(1);
        }
        finally
        {
            System.setErr(err);
        }
        assertThat(captured.toString()).contains("NullPointerException");
    }

    private static XferdLauncher.StatusArguments parse(final String... args)
    {
        return XferdLauncher.StatusArguments.parse(args);
    }
}
