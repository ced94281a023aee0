package io.xferd.daemon;

import io.xferd.daemon.metadata.HttpMetadataStore;
import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd metadata-server} as a process: Mooncake's http contract (GET/PUT/DELETE {@code ?key=}, 404 for an
 * absent key), keys PUT with a TTL expire unless PUT again, and SIGTERM stops it with exit 0.
 */
@Tag("integration")
@Timeout(60)
class MetadataServerCommandTest
{
    private static int status(final HttpClient http, final HttpRequest.Builder request) throws Exception
    {
        return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void shouldServeMooncakesContractAndExpireKeysNotRenewed() throws Exception
    {
        final int port = MetadataServers.freePort();
        try (ChildProcess server = ChildProcess.start("metadata-server", XferdMain.class, "metadata-server",
            "--listen", "127.0.0.1:" + port);
            HttpClient http = HttpClient.newHttpClient())
        {
            server.awaitLine("xferd metadata server on http://127.0.0.1:" + port + "/metadata", SystemTests.WAIT);
            final String url = "http://127.0.0.1:" + port + "/metadata?key=";
            final URI kept = URI.create(url + "mooncake%2Fram%2Fa");

            assertThat(status(http, HttpRequest.newBuilder(kept).GET())).isEqualTo(404);
            assertThat(status(http, HttpRequest.newBuilder(kept).PUT(HttpRequest.BodyPublishers.ofString("{}"))))
                .isEqualTo(200);
            final HttpResponse<String> got = http.send(HttpRequest.newBuilder(kept).GET().build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(got.statusCode()).isEqualTo(200);
            assertThat(got.body()).isEqualTo("{}");

            // an xferd daemon's PUT carries its TTL: not renewed, the key goes
            final URI leased = URI.create(url + "xferd%2Fc%2Fsegments%2Fb");
            assertThat(status(http, HttpRequest.newBuilder(leased).header(HttpMetadataStore.TTL_HEADER, "300")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"v\":1}")))).isEqualTo(200);
            assertThat(status(http, HttpRequest.newBuilder(leased).GET())).isEqualTo(200);
            SystemTests.awaitCondition(() ->
            {
                try
                {
                    return status(http, HttpRequest.newBuilder(leased).GET()) == 404;
                }
                catch (final Exception ex)
                {
                    throw new AssertionError(ex);
                }
            }, Duration.ofSeconds(5), () -> "the key PUT with a 300 ms TTL is still there");

            assertThat(status(http, HttpRequest.newBuilder(kept).DELETE())).isEqualTo(200);
            assertThat(status(http, HttpRequest.newBuilder(kept).GET())).isEqualTo(404);

            server.terminate();
            assertThat(server.awaitExit(SystemTests.WAIT)).isZero();
        }
    }
}
