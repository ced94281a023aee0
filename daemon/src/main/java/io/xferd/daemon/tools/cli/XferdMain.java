package io.xferd.daemon.tools.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code bin/xferd}: the command line of the daemon and its tools.
 */
@Command(name = "xferd", mixinStandardHelpOptions = true, version = "xferd 0.1.0",
    description = "Per-host KV-cache transfer daemon.",
    subcommands = {DaemonCommand.class, ConfigCommand.class, DemoCommand.class, StatusCommand.class,
        TopologyCommand.class, BenchCommand.class, BenchTargetCommand.class, ProfileCommand.class,
        MetadataServerCommand.class, ProxyCommand.class, BenchProxyCommand.class})
public final class XferdMain implements Runnable
{
    @Override
    public void run()
    {
        CommandLine.usage(this, System.out);
    }

    public static void main(final String[] args)
    {
        // belt and braces beside the launcher's -D: Chronicle must never phone home
        System.setProperty("chronicle.analytics.disable", "true");
        final int exitCode = new CommandLine(new XferdMain()).execute(args);
        System.exit(exitCode);
    }
}
