package io.xferd.daemon.tools.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.transport.TransportSelector;
import io.xferd.nativebindings.verbs.Verbs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Map;

/**
 * {@code xferd config}: the configuration a daemon would run with (embedded defaults, the config file, the
 * options given), and whether it would start, without starting anything.
 */
@Command(name = "config", mixinStandardHelpOptions = true,
    description = "Print the effective daemon configuration (--config FILE and the daemon's options) without " +
        "starting anything; exit 2 when it is invalid.")
public final class ConfigCommand implements java.util.concurrent.Callable<Integer>
{
    @Mixin
    DaemonOptions options;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final DaemonContext context;
        try
        {
            context = options.context();
        }
        catch (final IllegalArgumentException ex)
        {
            spec.commandLine().getErr().println("xferd: " + ex.getMessage());
            return 2;
        }
        final Map<String, Object> described = context.describe();
        if (json)
        {
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValueAsString(described));
            return 0;
        }
        print(described, out);
        try
        {
            final TransportSelector.Transport transport = TransportSelector.select(context, Verbs::availability);
            out.println("# a daemon would start with this configuration (transport: " +
                transport.name().toLowerCase(java.util.Locale.ROOT) + ")");
        }
        catch (final IllegalArgumentException ex)
        {
            out.println("# a daemon would refuse to start: " + ex.getMessage());
        }
        return 0;
    }

    static void print(final Map<String, Object> described, final PrintWriter out)
    {
        final int width = described.keySet().stream().mapToInt(String::length).max().orElse(0);
        described.forEach((key, value) -> out.println(key + ":" + " ".repeat(width - key.length() + 1) + value));
    }
}
