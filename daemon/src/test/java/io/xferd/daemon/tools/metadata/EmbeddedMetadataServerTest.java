package io.xferd.daemon.tools.metadata;

import io.xferd.daemon.metadata.HttpMetadataStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(30)
class EmbeddedMetadataServerTest
{
    private static final String TOKEN = "metadata-bearer-token-0123456789abcdef";

    private final EmbeddedMetadataServer server =
        new EmbeddedMetadataServer(new InetSocketAddress("127.0.0.1", 0), "/metadata", 0, TOKEN).start();

    @AfterEach
    void close()
    {
        server.close();
    }

    @Test
    void shouldServeOnlyRequestsCarryingItsBearerToken()
    {
        try (HttpMetadataStore holder = new HttpMetadataStore(server.url(), 10_000, 5_000, TOKEN);
            HttpMetadataStore stranger = new HttpMetadataStore(server.url(), 10_000, 5_000, null);
            HttpMetadataStore guesser = new HttpMetadataStore(server.url(), 10_000, 5_000, TOKEN + "x"))
        {
            holder.put("xferd/c/segments/decode", "{}");
            assertThat(holder.get("xferd/c/segments/decode")).isEqualTo("{}");

            assertThatThrownBy(() -> stranger.get("xferd/c/segments/decode")).hasMessageContaining("401");
            assertThatThrownBy(() -> guesser.put("xferd/c/segments/decode", "{\"forged\":1}"))
                .hasMessageContaining("401");
            assertThatThrownBy(() -> stranger.delete("xferd/c/segments/decode")).hasMessageContaining("401");
            assertThat(holder.get("xferd/c/segments/decode")).isEqualTo("{}");
        }
    }

    @Test
    void shouldRefuseAValueOrKeyOverItsBoundsAndKeepNothingOfIt() throws Exception
    {
        final HttpClient client = HttpClient.newHttpClient();
        final HttpResponse<String> oversize = client.send(HttpRequest.newBuilder(URI.create(server.url() + "?key=big"))
            .header("Authorization", "Bearer " + TOKEN)
            .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[EmbeddedMetadataServer.MAX_VALUE_LENGTH + 1]))
            .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(oversize.statusCode()).isEqualTo(413);
        assertThat(server.keyCount()).isZero();

        final HttpResponse<String> longKey = client.send(HttpRequest.newBuilder(
            URI.create(server.url() + "?key=" + "k".repeat(EmbeddedMetadataServer.MAX_KEY_LENGTH + 1)))
            .header("Authorization", "Bearer " + TOKEN).PUT(HttpRequest.BodyPublishers.ofString("{}"))
            .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(longKey.statusCode()).isEqualTo(400);
        assertThat(server.keyCount()).isZero();
    }
}
