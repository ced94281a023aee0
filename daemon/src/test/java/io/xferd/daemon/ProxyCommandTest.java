package io.xferd.daemon;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.xferd.daemon.tools.cli.ProxyCommand;
import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.proxy.standin.StandInOpenAiServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd proxy} as a process in front of two stand-in backends: it prints where it listens, serves a
 * streaming completion through prefill and decode, documents every option in {@code --help}, refuses a bad
 * command line with exit 2, and stops with exit 0 on SIGTERM.
 */
@Tag("integration")
@Timeout(120)
class ProxyCommandTest
{
    @Test
    void shouldServeAStreamingCompletionThroughPrefillAndDecodeAndStopOnSigterm() throws Exception
    {
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        try (StandInOpenAiServer prefill = StandInOpenAiServer.start(vertx, "prefill-0");
            StandInOpenAiServer decode = StandInOpenAiServer.start(vertx, "decode-0");
            ChildProcess proxy = ChildProcess.start("proxy", XferdMain.class, "proxy", "--listen", "127.0.0.1:0",
                "--prefill", prefill.url(), "--decode", decode.url(), "--event-loops", "1", "--health-timeout", "20s");
            HttpClient http = HttpClient.newHttpClient())
        {
            final String banner = proxy.awaitLine("xferd proxy on http://127.0.0.1:", SystemTests.WAIT);
            final Matcher port = Pattern.compile("127\\.0\\.0\\.1:([0-9]+) \\(mode v1, 1 prefill, 1 decode\\)")
                .matcher(banner);
            assertThat(port.find()).as(banner).isTrue();
            final HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port.group(1) + "/v1/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"hi\",\"max_tokens\":3,\"stream\":true}"))
                .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).startsWith("data: {").endsWith("data: [DONE]\n\n");
            assertThat(decode.received().getFirst().body().path("kv_transfer_params").path("remote_engine_id")
                .asText()).isEqualTo("prefill-0");

            proxy.terminate();
            assertThat(proxy.awaitExit(SystemTests.WAIT)).isZero();
        }
        finally
        {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldRefuseABadCommandLineWithExitTwo() throws Exception
    {
        try (ChildProcess proxy = ChildProcess.start("proxy", XferdMain.class, "proxy", "--listen", "127.0.0.1:0",
            "--prefill", "ftp://x:1", "--decode", "http://127.0.0.1:1"))
        {
            assertThat(proxy.awaitExit(SystemTests.WAIT)).isEqualTo(2);
            assertThat(proxy.output()).contains("backend URL must be http://host:port");
        }
    }

    @Test
    void shouldDocumentEveryOptionInHelp()
    {
        final CommandLine command = new CommandLine(new ProxyCommand());
        final String help = command.getUsageMessage();
        for (final CommandLine.Model.OptionSpec option : command.getCommandSpec().options())
        {
            assertThat(help).contains(option.longestName());
            assertThat(option.description()).as(option.longestName()).isNotEmpty();
        }
        assertThat(help).contains("--mode").contains("--admin-listen").contains("\"prefill\"");
    }
}
