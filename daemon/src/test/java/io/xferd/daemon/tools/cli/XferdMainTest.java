package io.xferd.daemon.tools.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class XferdMainTest
{
    @Test
    void topLevelHelpIsTheSameAsWithEverySubcommandsFullModel()
    {
        final String light = usage(XferdMain.commandLine(new String[]{"--help"}));
        final String full = usage(XferdMain.fullCommandLine());
        assertEquals(full, light);
        for (final Class<?> subcommand : XferdMain.SUBCOMMANDS)
        {
            final String name = subcommand.getAnnotation(CommandLine.Command.class).name();
            assertTrue(light.contains("  " + name + " "), name + " missing from:\n" + light);
        }
    }

    @Test
    void theSubcommandNamedFirstGetsItsFullModelAndHelp()
    {
        final CommandLine commandLine = XferdMain.commandLine(new String[]{"status", "--json"});
        final CommandLine status = commandLine.getSubcommands().get("status");
        assertNotNull(status.getCommandSpec().findOption("--json"));
        assertEquals(usage(new CommandLine(new StatusCommand())).replace("Usage: status", ""),
            usage(status).replace("Usage: xferd status", ""));
        assertNull(commandLine.getSubcommands().get("daemon").getCommandSpec().findOption("--dir"));
    }

    @Test
    void anUnknownSubcommandIsStillRefusedWithAnError()
    {
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = XferdMain.commandLine(new String[]{"stauts"});
        commandLine.setErr(new PrintWriter(err));
        assertEquals(2, commandLine.execute("stauts"));
        assertTrue(err.toString().contains("stauts"), err.toString());
    }

    private static String usage(final CommandLine commandLine)
    {
        final StringWriter out = new StringWriter();
        commandLine.usage(new PrintWriter(out));
        return out.toString();
    }
}
