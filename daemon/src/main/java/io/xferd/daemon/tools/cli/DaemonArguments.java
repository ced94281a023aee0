package io.xferd.daemon.tools.cli;

import io.xferd.daemon.agent.ThreadingMode;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code xferd daemon}'s options read without picocli, for {@link XferdLauncher}: picocli's model of the command
 * (~170 classes, proxies and method handles, none of which the AOT cache can hold) was the largest part of a
 * daemon's start that the cache left. The same option names, as {@code --name VALUE} or {@code --name=VALUE},
 * fill the same fields of {@link DaemonOptions} and {@link OperationsOptions}, which then build the context as
 * they do under picocli.
 * <p>
 * Anything not certain to read as picocli reads it (help or version, an unknown, short or repeated option, a
 * missing or empty value, one that does not convert, one that looks like an option, quotes, an {@code @file})
 * answers null, and picocli answers those arguments as before, its typed errors and usage included.
 * {@code DaemonArgumentsTest} checks both give the same context.
 */
final class DaemonArguments
{
    private final DaemonCommand command = new DaemonCommand();
    private final Set<String> given = new HashSet<>();

    private DaemonArguments()
    {
        command.options = new DaemonOptions();
        command.operations = new OperationsOptions();
        command.options.givenOptions = given;
    }

    /**
     * @return the command, its options read, for {@code daemon [OPTIONS]}; null for anything else (picocli's).
     */
    static DaemonCommand parse(final String[] args)
    {
        if (args.length == 0 || !"daemon".equals(args[0]))
        {
            return null;
        }
        final DaemonArguments parsed = new DaemonArguments();
        for (int i = 1; i < args.length; i++)
        {
            final String arg = args[i];
            if (!arg.startsWith("--") || arg.startsWith("@"))
            {
                return null;
            }
            final int equals = arg.indexOf('=');
            final String name = equals < 0 ? arg : arg.substring(0, equals);
            if (isFlag(name))
            {
                if (equals >= 0 || !parsed.flag(name))
                {
                    return null;
                }
                continue;
            }
            final String value;
            if (equals >= 0)
            {
                value = arg.substring(equals + 1);
            }
            else if (i + 1 < args.length)
            {
                value = args[++i];
            }
            else
            {
                return null;
            }
            if (value.isEmpty() || value.startsWith("@") || value.indexOf('"') >= 0 || value.indexOf('\'') >= 0 ||
                !parsed.option(name, value))
            {
                return null;
            }
        }
        return parsed.command;
    }

    private static boolean isFlag(final String name)
    {
        return "--insecure-no-peer-auth".equals(name) || "--journal".equals(name) || "--no-journal".equals(name);
    }

    private boolean flag(final String name)
    {
        switch (name)
        {
            case "--insecure-no-peer-auth" ->
            {
                if (!given.add(name))
                {
                    return false;
                }
                command.options.insecureNoPeerAuth = true;
            }
            default ->
            {
                if (!given.add("--journal"))
                {
                    return false;
                }
                command.operations.journal = "--journal".equals(name);
            }
        }
        return true;
    }

    /**
     * @return false when picocli should read these arguments: unknown or repeated, or a value it might read
     * otherwise (picocli takes {@code -1} as a number's value, but {@code -x} could be an option).
     */
    private boolean option(final String name, final String value)
    {
        if (!given.add(name))
        {
            return false;
        }
        final DaemonOptions options = command.options;
        final OperationsOptions operations = command.operations;
        try
        {
            switch (name)
            {
                case "--workers" -> options.workers = Integer.parseInt(value);
                case "--connections-per-peer" -> options.connectionsPerPeer = Integer.parseInt(value);
                case "--slice-size" -> options.sliceSize = Integer.parseInt(value);
                case "--journal-retention-cycles" -> operations.journalRetentionCycles = Integer.parseInt(value);
                case "--liveness-timeout-ms" -> options.livenessTimeoutMs = Long.parseLong(value);
                case "--transfer-timeout-ms" -> options.transferTimeoutMs = Long.parseLong(value);
                case "--metadata-ttl-ms" -> options.metadataTtlMs = Long.parseLong(value);
                case "--slow-request-ms" -> operations.slowRequestMs = Long.parseLong(value);
                default ->
                {
                    return !value.startsWith("-") && textOption(name, value);
                }
            }
        }
        catch (final NumberFormatException ex)
        {
            return false;
        }
        return true;
    }

    private boolean textOption(final String name, final String value)
    {
        final DaemonOptions options = command.options;
        final OperationsOptions operations = command.operations;
        switch (name)
        {
            case "--config" -> options.config = Path.of(value);
            case "--dir" -> options.directory = Path.of(value);
            case "--topology-matrix" -> options.topologyMatrix = Path.of(value);
            case "--cluster-token-file" -> options.clusterTokenFile = Path.of(value);
            case "--metadata-token-file" -> options.metadataTokenFile = Path.of(value);
            case "--journal-dir" -> operations.journalDirectory = Path.of(value);
            case "--threading" ->
            {
                final ThreadingMode mode = threadingMode(value);
                if (mode == null)
                {
                    return false;
                }
                options.threading = mode;
            }
            case "--device-name" ->
            {
                final List<String> names = commaSeparated(value);
                if (names == null)
                {
                    return false;
                }
                options.deviceNames = names;
            }
            case "--idle" -> options.idle = value;
            case "--rpc-address" -> options.rpcAddress = value;
            case "--protocol" -> options.protocol = value;
            case "--protocol-fallback" -> options.protocolFallback = value;
            case "--tcp-congestion" -> options.tcpCongestion = value;
            case "--gid-index" -> options.gidIndex = value;
            case "--metadata-server" -> options.metadataServer = value;
            case "--cluster-id" -> options.clusterId = value;
            case "--journal-roll-cycle" -> operations.journalRollCycle = value;
            case "--metrics-address" -> operations.metricsAddress = value;
            default ->
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return the constant of exactly this name (picocli's enum converter is case-sensitive), else null.
     */
    private static ThreadingMode threadingMode(final String value)
    {
        for (final ThreadingMode mode : ThreadingMode.values())
        {
            if (mode.name().equals(value))
            {
                return mode;
            }
        }
        return null;
    }

    /**
     * @return the names between commas, or null when one is empty (picocli's split is left to judge those).
     */
    private static List<String> commaSeparated(final String value)
    {
        final List<String> names = new ArrayList<>();
        int start = 0;
        while (true)
        {
            final int comma = value.indexOf(',', start);
            final String name = comma < 0 ? value.substring(start) : value.substring(start, comma);
            if (name.isEmpty())
            {
                return null;
            }
            names.add(name);
            if (comma < 0)
            {
                return names;
            }
            start = comma + 1;
        }
    }
}
