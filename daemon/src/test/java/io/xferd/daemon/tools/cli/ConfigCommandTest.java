package io.xferd.daemon.tools.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd config}: the effective configuration (file, then the options given) printed without starting
 * anything; the same options and precedence as {@code xferd daemon}.
 */
@Timeout(30)
class ConfigCommandTest
{
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(final String... args)
    {
        final CommandLine commandLine = XferdMain.commandLine(args);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    private Path config(final String json) throws IOException
    {
        return Files.writeString(dir.resolve("xferd.json"), json);
    }

    @Test
    void shouldLetOptionsGivenOverrideTheFileAndKeepTheFileWhereNoneIsGiven() throws IOException
    {
        final Path file = config("""
            {"transfer_workers": 2, "idle_strategy": "yielding", "protocol": "rdma", "rpc_address": "10.0.0.5:13000",
             "max_clients": 32}
            """);

        assertThat(run("config", "--config", file.toString(), "--json", "--workers", "3", "--protocol", "tcp"))
            .isZero();

        final JsonNode effective = new ObjectMapper().readTree(out.toString());
        assertThat(effective.get("transfer_workers").intValue()).isEqualTo(3);
        assertThat(effective.get("protocol").textValue()).isEqualTo("tcp");
        assertThat(effective.get("idle_strategy").textValue()).isEqualTo("yielding");
        assertThat(effective.get("rpc_address").textValue()).isEqualTo("10.0.0.5:13000");
        assertThat(effective.get("max_clients").intValue()).isEqualTo(32);
        assertThat(effective.get("threading_mode").textValue()).isEqualTo("SHARED");
    }

    @Test
    void shouldPrintTheConfigurationWithWhatIsNotUsedAndWhetherADaemonWouldStart() throws IOException
    {
        final Path file = config("""
            {"prefill_url": "192.168.0.137:13003", "decode_url": "192.168.0.139:13003",
             "metadata_server": "192.168.0.139:2379", "metadata_backend": "etcd", "protocol": "rdma",
             "device_name": "mlx5_0,mlx5_1"}
            """);

        assertThat(run("config", "--config", file.toString())).isZero();

        assertThat(out.toString())
            .containsPattern("(?m)^protocol: +rdma$")
            .containsPattern("(?m)^device_name: +mlx5_0,mlx5_1$")
            .containsPattern("(?m)^metadata_server: +etcd://192.168.0.139:2379$")
            .containsPattern("(?m)^prefill_url: +accepted, not used: roles live in the client-side connector")
            .contains("# a daemon would refuse to start: protocol rdma requested");
    }

    @Test
    void shouldSayADaemonWouldStartWithTheDefaults()
    {
        assertThat(run("config")).isZero();

        assertThat(out.toString()).containsPattern("(?m)^protocol: +tcp$")
            .contains("# a daemon would start with this configuration");
    }

    @Test
    void shouldSayADaemonWouldServeTcpWhenRdmaCannotBeServedAndTheFallbackIsNamed()
    {
        org.junit.jupiter.api.Assumptions.assumeFalse(
            io.xferd.nativebindings.verbs.Verbs.availability().isAvailable(), "this host has RDMA devices");

        assertThat(run("config", "--protocol", "rdma", "--protocol-fallback", "tcp", "--gid-index", "3")).isZero();

        assertThat(out.toString()).containsPattern("(?m)^protocol_fallback: +tcp$")
            .containsPattern("(?m)^gid_index: +3$")
            .contains("# a daemon would start with this configuration (transport: tcp)");
    }

    @Test
    void shouldExit2WithTheMessageOfABadFile() throws IOException
    {
        final Path file = config("{\"transfer_workers\": \"four\"}");

        assertThat(run("config", "--config", file.toString())).isEqualTo(2);

        assertThat(err.toString()).startsWith("xferd: " + file +
            ": line 1, column 22: transfer_workers must be an integer, got string \"four\"");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void shouldExit2WhenAnOptionGivenIsInvalid()
    {
        assertThat(run("config", "--workers", "0")).isEqualTo(2);

        assertThat(err.toString()).startsWith("xferd: transfer workers must be 1..64: 0");
        assertThat(run("config", "--gid-index", "first")).isEqualTo(2);
        assertThat(err.toString()).contains("xferd: --gid-index must be auto or 0..255: first");
    }

    @Test
    void shouldExit2ForATcpCongestionControlNameThatIsNotOne()
    {
        assertThat(run("config", "--tcp-congestion", "cubic;reboot")).isEqualTo(2);

        assertThat(err.toString())
            .startsWith("xferd: tcp congestion control must be 1..15 of a-z 0-9 _ (e.g. cubic): cubic;reboot");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void shouldLetTheTcpCongestionOptionOverrideTheFile() throws IOException
    {
        final Path file = config("{\"tcp_congestion\": \"reno\"}");

        assertThat(run("config", "--config", file.toString())).isZero();
        assertThat(out.toString()).containsPattern("(?m)^tcp_congestion: +reno$");

        out.getBuffer().setLength(0);
        assertThat(run("config", "--config", file.toString(), "--tcp-congestion", "cubic")).isZero();
        assertThat(out.toString()).containsPattern("(?m)^tcp_congestion: +cubic$");
    }
}
