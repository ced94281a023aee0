package io.xferd.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.xferd.proxy.standin.StandInOpenAiServer.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class DisaggregationFlowTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shouldStreamTheDecodeAnswerAfterAV1PrefillAndHandOverItsTransferParameters() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            harness.decode.get(0).tokens(5, 1);
            final HttpResponse<String> response = harness.post("/v1/completions",
                ProxyHarness.streamingCompletion(50), "X-Request-Id", "req-42", "Authorization", "Bearer k");

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("content-type")).hasValue("text/event-stream");
            assertThat(response.headers().firstValue("x-request-id")).hasValue("req-42");
            assertThat(response.body()).isEqualTo(
                event(0) + event(1) + event(2) + event(3) + event(4) + "data: [DONE]\n\n");

            final Received prefill = harness.prefill.get(0).received().getFirst();
            assertThat(prefill.requestId()).isEqualTo("req-42");
            assertThat(prefill.body().get("max_tokens").asInt()).isEqualTo(1);
            assertThat(prefill.body().get("stream").asBoolean()).isFalse();
            assertThat(prefill.body().path("kv_transfer_params").path("do_remote_decode").asBoolean()).isTrue();

            final Received decode = harness.decode.get(0).received().getFirst();
            assertThat(decode.requestId()).isEqualTo("req-42");
            assertThat(decode.body().get("max_tokens").asInt()).isEqualTo(50);
            assertThat(decode.body().get("stream").asBoolean()).isTrue();
            final JsonNode params = decode.body().get("kv_transfer_params");
            assertThat(params.get("remote_engine_id").asText()).isEqualTo("prefill-0");
            assertThat(params.get("remote_block_ids")).hasSize(3);
            assertThat(params.get("do_remote_prefill").asBoolean()).isTrue();
        }
    }

    @Test
    void shouldSendTheV0DecodeTheClientsRequestAsItWas() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().mode(DisaggMode.V0));
            final String body = "{\"model\":\"stand-in\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]," +
                "\"max_tokens\":7,\"stream\":false}";
            final HttpResponse<String> response = harness.post("/v1/chat/completions", body);

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(response.body()).get("id").asText()).isEqualTo("cmpl-decode-0");
            assertThat(harness.decode.get(0).received().getFirst().body()).isEqualTo(JSON.readTree(body));
            final JsonNode prefill = harness.prefill.get(0).received().getFirst().body();
            assertThat(prefill.get("max_tokens").asInt()).isEqualTo(1);
            assertThat(prefill.has("kv_transfer_params")).isFalse();
            assertThat(harness.decode.get(0).received().getFirst().path()).isEqualTo("/v1/chat/completions");
        }
    }

    @Test
    void shouldGenerateARequestIdWhenTheClientSentNoneAndGiveBothBackendsTheSame() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            final HttpResponse<String> response = harness.post("/v1/completions", ProxyHarness.streamingCompletion(3));
            final String id = response.headers().firstValue("x-request-id").orElseThrow();
            assertThat(id).hasSize(36);
            assertThat(harness.prefill.get(0).received().getFirst().requestId()).isEqualTo(id);
            assertThat(harness.decode.get(0).received().getFirst().requestId()).isEqualTo(id);
        }
    }

    @Test
    void shouldPassABackendsErrorToTheClientWithItsStatus() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            harness.prefill.get(0).failStatus(422);
            final HttpResponse<String> prefillFailed = harness.post("/v1/completions",
                ProxyHarness.streamingCompletion(3));
            assertThat(prefillFailed.statusCode()).isEqualTo(422);
            assertThat(JSON.readTree(prefillFailed.body()).at("/error/message").asText())
                .isEqualTo("stand-in prefill-0 fails");
            assertThat(harness.decode.get(0).completionRequests()).isZero();

            harness.prefill.get(0).failStatus(0);
            harness.decode.get(0).failStatus(500);
            final HttpResponse<String> decodeFailed = harness.post("/v1/completions",
                ProxyHarness.streamingCompletion(3));
            assertThat(decodeFailed.statusCode()).isEqualTo(500);
            assertThat(JSON.readTree(decodeFailed.body()).at("/error/code").asInt()).isEqualTo(500);
            assertThat(harness.decode.get(0).received()).hasSize(1);
        }
    }

    @Test
    void shouldPassModelsThroughAndAnswerItsOwnHealthAndMetrics() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            final HttpResponse<String> models = harness.get("/v1/models");
            assertThat(models.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(models.body()).at("/data/0/owned_by").asText()).isEqualTo("decode-0");

            final HttpResponse<String> health = harness.get("/health");
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(health.body()).get("decode_healthy").asInt()).isEqualTo(1);

            harness.post("/v1/completions", ProxyHarness.streamingCompletion(3));
            final String metrics = harness.get("/metrics").body();
            assertThat(metrics)
                .contains("xferd_proxy_requests_total{code=\"200\",endpoint=\"completions\"} 1.0")
                .contains("xferd_proxy_prefill_seconds_count 1")
                .contains("xferd_proxy_kv_handover_seconds_count 1")
                .contains("xferd_proxy_first_decode_token_seconds_count 1")
                .contains("xferd_proxy_time_to_first_token_seconds_count 1")
                .contains("xferd_proxy_backend_outstanding_requests{backend=\"" + harness.decode.get(0).url() +
                    "\",role=\"decode\"} 0.0");

            assertThat(harness.get("/v1/embeddings").statusCode()).isEqualTo(404);
            assertThat(harness.get("/v1/completions").statusCode()).isEqualTo(405);
        }
    }

    private static String event(final int token)
    {
        return "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"t" + token + "\"}]}\n\n";
    }
}
