package io.xferd.daemon.tools.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The help texts the build rendered are byte for byte what picocli renders from the full model now (plain and
 * ANSI), so they cannot go stale; {@code xferd}, {@code xferd --help} and {@code xferd -h} all print the full
 * one, with the commands; anything else goes through picocli.
 */
class UsageTextTest
{
    @Test
    void everyPreRenderedTextIsWhatPicocliRendersFromTheFullModel() throws IOException
    {
        for (final String command : UsageText.PRE_RENDERED)
        {
            for (final Ansi ansi : new Ansi[]{Ansi.OFF, Ansi.ON})
            {
                final String resource = UsageText.resource(command, ansi == Ansi.ON);
                try (InputStream text = UsageText.class.getResourceAsStream(resource))
                {
                    assertThat(text).as("%s: the build (process-classes) writes it", resource).isNotNull();
                    assertThat(new String(text.readAllBytes(), StandardCharsets.UTF_8)).as(resource)
                        .isEqualTo(UsageTextRenderer.render(command, ansi));
                }
            }
        }
        assertThat(UsageTextRenderer.render("", Ansi.OFF)).isEqualTo(fullModelUsage())
            .contains("Commands:", "  status ", "  daemon ");
        assertThat(UsageTextRenderer.render("status", Ansi.OFF)).startsWith("Usage: xferd status").contains("--json");
    }

    @Test
    void xferdAloneAndWithHelpPrintTheTopLevelText()
    {
        final String expected = UsageTextRenderer.render("", Ansi.AUTO.enabled() ? Ansi.ON : Ansi.OFF);
        for (final String[] args : new String[][]{{}, {"--help"}, {"-h"}})
        {
            assertThat(printed(args)).as(String.join(" ", args)).isEqualTo(expected);
        }
        // and picocli, asked without the resource (a bare xferd runs XferdMain.run), says the same
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = XferdMain.commandLine(new String[0]);
        commandLine.setOut(new PrintWriter(out));
        assertThat(commandLine.execute()).isZero();
        assertThat(out.toString()).isEqualTo(UsageTextRenderer.render("", Ansi.OFF));
    }

    @Test
    void onlyABareHelpRequestTakesTheShortCut()
    {
        assertThat(UsageText.helpAskedFor(new String[]{"status", "--help"})).isEqualTo("status");
        assertThat(UsageText.helpAskedFor(new String[]{"status", "-h"})).isEqualTo("status");
        assertThat(UsageText.helpAskedFor(new String[]{"--version"})).isNull();
        assertThat(UsageText.helpAskedFor(new String[]{"status"})).isNull();
        assertThat(UsageText.helpAskedFor(new String[]{"status", "--json", "--help"})).isNull();
        assertThat(UsageText.helpAskedFor(new String[]{"demo", "--help"})).as("its seed's default changes").isNull();
        assertThat(UsageText.helpAskedFor(new String[]{"stauts", "--help"})).isNull();
        assertThat(printed(new String[]{"status", "--json"})).isEmpty();
    }

    private static String printed(final String[] args)
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        UsageText.print(args, out);
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static String fullModelUsage()
    {
        final StringWriter out = new StringWriter();
        final CommandLine commandLine = XferdMain.fullCommandLine();
        commandLine.setColorScheme(CommandLine.Help.defaultColorScheme(Ansi.OFF));
        commandLine.usage(new PrintWriter(out));
        return out.toString();
    }
}
