package io.xferd.daemon.tools.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.List;

/**
 * {@code bin/xferd}: the command line of the daemon and its tools.
 */
@Command(name = "xferd", mixinStandardHelpOptions = true, version = "xferd 0.1.0",
    description = "Per-host KV-cache transfer daemon.")
public final class XferdMain implements Runnable
{
    /**
     * Every subcommand. Picocli builds the full model (reflection over every option, mixin and default) of the one
     * that runs; the others are only a name and a description for the usage text: that model, built for all eleven,
     * was most of what {@code xferd --help} and {@code xferd status} cost in CPU.
     */
    static final List<Class<?>> SUBCOMMANDS = List.of(DaemonCommand.class, ConfigCommand.class, DemoCommand.class,
        StatusCommand.class, TopologyCommand.class, BenchCommand.class, BenchTargetCommand.class, ProfileCommand.class,
        MetadataServerCommand.class, ProxyCommand.class, BenchProxyCommand.class);

    @Spec
    CommandSpec spec;

    /**
     * {@code xferd} with nothing else: the same help as {@code xferd --help}, the commands included.
     */
    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(final String[] args)
    {
        // belt and braces beside the launcher's -D: Chronicle must never phone home
        System.setProperty("chronicle.analytics.disable", "true");
        final int exitCode = commandLine(args).execute(args);
        System.exit(exitCode);
    }

    /**
     * @return the command line for these arguments: the full model of the subcommand named first (if any), a
     * name-and-description stand-in for every other one.
     */
    public static CommandLine commandLine(final String[] args)
    {
        final String first = args.length > 0 ? args[0] : "";
        final CommandLine commandLine = new CommandLine(new XferdMain());
        for (final Class<?> subcommand : SUBCOMMANDS)
        {
            final Command command = subcommand.getAnnotation(Command.class);
            commandLine.addSubcommand(command.name(),
                command.name().equals(first) ? subcommand : new CommandLine(standIn(command)));
        }
        return commandLine;
    }

    /**
     * @return every subcommand's full model, as picocli builds it from the annotations (the usage text's reference).
     */
    static CommandLine fullCommandLine()
    {
        final CommandLine commandLine = new CommandLine(new XferdMain());
        for (final Class<?> subcommand : SUBCOMMANDS)
        {
            commandLine.addSubcommand(subcommand.getAnnotation(Command.class).name(), subcommand);
        }
        return commandLine;
    }

    private static CommandSpec standIn(final Command command)
    {
        final CommandSpec spec = CommandSpec.create().name(command.name());
        spec.usageMessage().description(command.description()).header(command.header()).hidden(command.hidden());
        return spec;
    }
}
