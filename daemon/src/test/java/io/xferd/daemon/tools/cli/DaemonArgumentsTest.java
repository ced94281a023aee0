package io.xferd.daemon.tools.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd daemon}'s options read without picocli: every form it takes gives the daemon the context picocli
 * gives it (or the same refusal), and everything else is left to picocli, whose typed errors still answer it.
 */
class DaemonArgumentsTest
{
    /**
     * Per option, values picocli takes: as {@code --name VALUE} and as {@code --name=VALUE}.
     */
    private static final Map<String, List<String>> VALUES = Map.ofEntries(
        Map.entry("--dir", List.of("/run/xferd-a", "relative/dir")),
        Map.entry("--threading", List.of("SHARED", "DEDICATED")),
        Map.entry("--workers", List.of("1", "2", "4", "+3")),
        Map.entry("--idle", List.of("backoff", "spin-backoff", "yielding", "busy-spin", "sleeping")),
        Map.entry("--rpc-address", List.of("127.0.0.1:0", "10.0.0.5:13000", "127.0.0.1:12001")),
        Map.entry("--liveness-timeout-ms", List.of("500", "2000", "60000")),
        Map.entry("--protocol", List.of("tcp", "rdma")),
        Map.entry("--protocol-fallback", List.of("none", "tcp", "TCP")),
        Map.entry("--tcp-congestion", List.of("cubic", "reno", "bbr")),
        Map.entry("--gid-index", List.of("auto", "3", "AUTO")),
        Map.entry("--device-name", List.of("eth0", "eth0,eth1", "mlx5_0,mlx5_1,mlx5_2")),
        Map.entry("--cluster-token-file", List.of("/etc/xferd/cluster.token", "token")),
        Map.entry("--metadata-token-file", List.of("/etc/xferd/metadata.token")),
        Map.entry("--connections-per-peer", List.of("1", "2", "8")),
        Map.entry("--slice-size", List.of("65536", "524288", "1048576")),
        Map.entry("--transfer-timeout-ms", List.of("100", "5000")),
        Map.entry("--metadata-server", List.of("P2PHANDSHAKE", "etcd://10.0.0.1:2379", "redis://10.0.0.2:6379",
            "http://10.0.0.3:8080/metadata", "10.0.0.4:2379")),
        Map.entry("--cluster-id", List.of("default", "prefill-7")),
        Map.entry("--metadata-ttl-ms", List.of("1000", "10000")),
        Map.entry("--journal-dir", List.of("/var/lib/xferd/journal")),
        Map.entry("--journal-roll-cycle", List.of("FAST_HOURLY", "DAILY", "MINUTELY")),
        Map.entry("--journal-retention-cycles", List.of("0", "24", "48")),
        Map.entry("--slow-request-ms", List.of("-1", "0", "100", "2500")),
        Map.entry("--metrics-address", List.of("off", "127.0.0.1:9464", "0.0.0.0:0")));

    private static final List<String> FLAGS = List.of("--insecure-no-peer-auth", "--journal", "--no-journal");

    @Test
    void shouldGiveTheContextPicocliGivesForEveryOptionInBothForms()
    {
        for (final Map.Entry<String, List<String>> option : VALUES.entrySet())
        {
            for (final String value : option.getValue())
            {
                assertSameAsPicocli("daemon", option.getKey(), value);
                assertSameAsPicocli("daemon", option.getKey() + "=" + value);
                if (!option.getKey().equals("--dir") && !option.getKey().equals("--metrics-address"))
                {
                    assertSameAsPicocli("daemon", "--dir", "/run/x", option.getKey(), value, "--metrics-address", "off");
                }
            }
        }
        for (final String flag : FLAGS)
        {
            assertSameAsPicocli("daemon", flag);
            assertSameAsPicocli("daemon", "--rpc-address", "127.0.0.1:0", flag, "--workers", "2");
        }
        assertSameAsPicocli("daemon");
    }

    @Test
    void shouldGiveTheContextPicocliGivesForSeededCombinations()
    {
        final Random random = new Random(0x5eed_0016L);
        final List<String> names = new ArrayList<>(VALUES.keySet());
        Collections.sort(names);
        for (int run = 0; run < 300; run++)
        {
            Collections.shuffle(names, random);
            final List<List<String>> options = new ArrayList<>();
            for (final String name : names.subList(0, 1 + random.nextInt(8)))
            {
                final List<String> values = VALUES.get(name);
                final String value = values.get(random.nextInt(values.size()));
                options.add(random.nextBoolean() ? List.of(name + "=" + value) : List.of(name, value));
            }
            if (random.nextInt(3) == 0)
            {
                options.add(random.nextInt(options.size() + 1), List.of(FLAGS.get(random.nextInt(FLAGS.size()))));
            }
            final List<String> args = new ArrayList<>(List.of("daemon"));
            options.forEach(args::addAll);
            assertSameAsPicocli(args.toArray(String[]::new));
        }
    }

    @Test
    void shouldReadTheConfigFileFirstAndLetTheOptionsGivenOverrideIt(@TempDir final Path dir) throws IOException
    {
        final Path file = Files.writeString(dir.resolve("xferd.json"), """
            {"transfer_workers": 2, "idle_strategy": "yielding", "protocol": "rdma", "rpc_address": "10.0.0.5:13000"}
            """);
        assertSameAsPicocli("daemon", "--config", file.toString(), "--workers", "3", "--protocol", "tcp");
        assertSameAsPicocli("daemon", "--config=" + file, "--no-journal");
        final Map<String, Object> described = describe(DaemonArguments.parse(
            new String[]{"daemon", "--config", file.toString(), "--workers", "3"}));
        assertThat(described).containsEntry("transfer_workers", 3).containsEntry("idle_strategy", "yielding");
    }

    @Test
    void shouldGiveTheRefusalPicocliGivesForValuesTheContextRejects()
    {
        for (final String[] args : new String[][]{{"daemon", "--workers", "0"}, {"daemon", "--workers", "-2"},
            {"daemon", "--gid-index", "x"}, {"daemon", "--idle", "sleepy"}, {"daemon", "--protocol", "udp"},
            {"daemon", "--tcp-congestion", "CUBIC"}, {"daemon", "--tcp-congestion=a b"},
            {"daemon", "--slice-size=1"}, {"daemon", "--rpc-address", "nohost"}, {"daemon", "--liveness-timeout-ms=-5"},
            {"daemon", "--metadata-server", "ftp://x"}, {"daemon", "--journal-roll-cycle", "WEEKLY"}})
        {
            assertSameAsPicocli(args);
        }
    }

    @Test
    void shouldLeaveToPicocliWhatItIsNotSureToReadAsPicocliDoes()
    {
        for (final String[] args : new String[][]{{}, {"status"}, {"daemon", "--help"}, {"daemon", "-h"},
            {"daemon", "-V"}, {"daemon", "--version"}, {"daemon", "--dir"}, {"daemon", "--dir="},
            {"daemon", "--dir", "a", "--dir", "b"}, {"daemon", "--journal", "--no-journal"},
            {"daemon", "--journal=false"}, {"daemon", "--insecure-no-peer-auth=true"},
            {"daemon", "--insecure-no-peer-auth", "--insecure-no-peer-auth"}, {"daemon", "--dri", "a"},
            {"daemon", "extra"}, {"daemon", "--"}, {"daemon", "@args.txt"}, {"daemon", "--dir", "@dir"},
            {"daemon", "--workers", "abc"}, {"daemon", "--workers", "1.5"}, {"daemon", "--workers", "0x10"},
            {"daemon", "--workers", "99999999999"}, {"daemon", "--slow-request-ms", "--dir"},
            {"daemon", "--threading", "shared"}, {"daemon", "--dir", "--json"}, {"daemon", "--idle", "-x"},
            {"daemon", "--device-name", "eth0,"}, {"daemon", "--device-name", "a,,b"},
            {"daemon", "--device-name", "\"eth0,eth1\""}, {"daemon", "--dir", "'/run/x'"}})
        {
            assertThat(DaemonArguments.parse(args)).as(String.join(" ", args)).isNull();
        }
    }

    @Test
    void shouldStillAnswerABadValueWithPicocliTypedErrorAndExitCode2()
    {
        final String[] args = {"daemon", "--workers", "abc"};
        assertThat(DaemonArguments.parse(args)).isNull();
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = XferdMain.commandLine(args);
        commandLine.setErr(new PrintWriter(err, true));
        commandLine.setOut(new PrintWriter(new StringWriter(), true));
        assertThat(commandLine.execute(args)).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--workers': 'abc' is not an int")
            .contains("Usage: xferd daemon");
    }

    private static void assertSameAsPicocli(final String... args)
    {
        final String described = String.join(" ", args);
        final DaemonCommand direct = DaemonArguments.parse(args);
        assertThat(direct).as("read without picocli: " + described).isNotNull();
        final CommandLine commandLine = XferdMain.commandLine(args);
        commandLine.parseArgs(args);
        final DaemonCommand viaPicocli = commandLine.getSubcommands().get("daemon").getCommand();
        assertThat(outcome(direct)).as(described).isEqualTo(outcome(viaPicocli));
    }

    /**
     * @return the described context, or the refusal's type and message.
     */
    private static Object outcome(final DaemonCommand command)
    {
        try
        {
            return describe(command);
        }
        catch (final RuntimeException ex)
        {
            return ex.getClass().getName() + ": " + ex.getMessage();
        }
    }

    private static Map<String, Object> describe(final DaemonCommand command)
    {
        final var context = command.options.context();
        command.operations.applyTo(context.operations());
        return context.describe();
    }
}
