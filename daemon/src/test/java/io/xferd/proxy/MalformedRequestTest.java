package io.xferd.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class MalformedRequestTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shouldRefuseBodiesThatAreNotJsonObjectsWith400AndTouchNoBackend() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            for (final String body : new String[]{"{\"prompt\": \"unterminated", "not json", "[1,2,3]", "\"text\"",
                "", "{\"a\":1}{"})
            {
                final HttpResponse<String> response = harness.post("/v1/completions", body);
                assertThat(response.statusCode()).as(body).isEqualTo(400);
                assertThat(JSON.readTree(response.body()).at("/error/type").asText()).as(body)
                    .isEqualTo("invalid_request_error");
            }
            assertThat(harness.prefill.get(0).received()).isEmpty();
            assertThat(harness.decode.get(0).received()).isEmpty();
            assertThat(harness.post("/v1/completions", ProxyHarness.streamingCompletion(2)).statusCode())
                .as("still serving").isEqualTo(200);
        }
    }

    @Test
    void shouldRefuseABodyOverTheLimitWith413FromItsContentLength() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().maxBodyBytes(1024));
            final String big = "{\"prompt\":\"" + "x".repeat(2048) + "\"}";
            final HttpResponse<String> response = harness.post("/v1/completions", big);
            assertThat(response.statusCode()).isEqualTo(413);
            assertThat(JSON.readTree(response.body()).at("/error/message").asText()).contains("over the limit");
            assertThat(harness.prefill.get(0).received()).isEmpty();

            final String fits = "{\"prompt\":\"" + "x".repeat(900) + "\",\"max_tokens\":2,\"stream\":true}";
            assertThat(harness.post("/v1/completions", fits).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void shouldRefuseAChunkedBodyAsSoonAsItPassesTheLimit() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().maxBodyBytes(1024));
            try (Socket socket = new Socket("127.0.0.1", harness.proxy.port()))
            {
                socket.setSoTimeout(30_000);
                final OutputStream out = socket.getOutputStream();
                out.write(("POST /v1/completions HTTP/1.1\r\nHost: p\r\nContent-Type: application/json\r\n" +
                    "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                final String chunk = "x".repeat(600);
                for (int i = 0; i < 2; i++)
                {
                    out.write((Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                }
                out.flush(); // never terminated: the proxy must answer without waiting for the end
                final String answer = ProxyHarness.readUntil(socket.getInputStream(), "}}");
                assertThat(answer).startsWith("HTTP/1.1 413");
            }
            assertThat(harness.prefill.get(0).received()).isEmpty();
        }
    }
}
