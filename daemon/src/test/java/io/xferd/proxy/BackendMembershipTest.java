package io.xferd.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.xferd.proxy.standin.StandInOpenAiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Backends join and leave a running proxy: through the admin endpoint and through the config file.
 */
@Timeout(90)
class BackendMembershipTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shouldAddAndRemoveBackendsThroughTheAdminEndpointWithoutARestart() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().adminListen("127.0.0.1:0"));
            final StandInOpenAiServer extra = StandInOpenAiServer.start(harness.backendsVertx, "decode-extra");
            final String admin = "http://127.0.0.1:" + harness.proxy.adminPort();

            assertThat(admin(harness, "POST", admin + "/backends?role=decode&url=" + encode(extra.url())).statusCode())
                .isEqualTo(201);
            assertThat(admin(harness, "POST", admin + "/backends?role=decode&url=" + encode(extra.url())).statusCode())
                .as("adding it again changes nothing").isEqualTo(200);
            final JsonNode listed = JSON.readTree(admin(harness, "GET", admin + "/backends").body());
            assertThat(listed.get("decode")).hasSize(2);
            assertThat(listed.at("/decode/1/url").asText()).isEqualTo(extra.url());

            assertThat(admin(harness, "DELETE", admin + "/backends?role=decode&url=" +
                encode(harness.decode.get(0).url())).statusCode()).isEqualTo(200);
            for (int i = 0; i < 3; i++)
            {
                assertThat(harness.post("/v1/completions", ProxyHarness.streamingCompletion(2)).statusCode())
                    .isEqualTo(200);
            }
            assertThat(extra.completed()).isEqualTo(3);
            assertThat(harness.decode.get(0).received()).isEmpty();

            assertThat(admin(harness, "DELETE", admin + "/backends?role=decode&url=http://127.0.0.1:1").statusCode())
                .isEqualTo(404);
            assertThat(admin(harness, "POST", admin + "/backends?role=decode&url=ftp://x:1").statusCode())
                .isEqualTo(400);
            assertThat(admin(harness, "POST", admin + "/backends?role=middle&url=http://x:1").statusCode())
                .isEqualTo(400);
        }
    }

    @Test
    void shouldFollowTheConfigFileWhenItChangesAndKeepTheOldSetWhenItIsBroken(@TempDir final Path dir)
        throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 2))
        {
            final Path file = dir.resolve("backends.json");
            write(file, List.of(harness.prefill.get(0).url()), List.of(harness.decode.get(0).url()));
            harness.start(new ProxyContext().listen("127.0.0.1:0").configFile(file).configPollMs(50)
                .healthIntervalMs(50).minEjectMs(0).eventLoops(1));
            final BackendPool decode = harness.proxy.backends().pool(BackendRole.DECODE);
            assertThat(decode.members()).hasSize(1);

            Files.writeString(file, "{\"decode\": [oops");
            write(file, List.of(harness.prefill.get(0).url()), List.of(harness.decode.get(1).url()));
            ProxyHarness.await("file reloaded", () -> decode.members().size() == 1 &&
                decode.find(harness.decode.get(1).url()) != null);
            assertThat(harness.post("/v1/completions", ProxyHarness.streamingCompletion(2)).statusCode())
                .isEqualTo(200);
            assertThat(harness.decode.get(1).completed()).isEqualTo(1);

            Files.writeString(file, "{\"decode\": \"not a list\"}");
            harness.proxy.probeNow();
            Thread.sleep(200); // several poll periods: a broken file must change nothing
            assertThat(decode.members()).hasSize(1);
            assertThat(harness.proxy.backends().pool(BackendRole.PREFILL).members()).hasSize(1);
        }
    }

    private static void write(final Path file, final List<String> prefill, final List<String> decode)
        throws Exception
    {
        final var root = JSON.createObjectNode();
        prefill.forEach(root.putArray("prefill")::add);
        decode.forEach(root.putArray("decode")::add);
        final Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, root.toString());
        Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static String encode(final String text)
    {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    private static HttpResponse<String> admin(final ProxyHarness harness, final String method, final String url)
        throws Exception
    {
        return harness.http.send(HttpRequest.newBuilder(URI.create(url)).timeout(ProxyHarness.WAIT)
            .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }
}
