package io.xferd.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.xferd.proxy.standin.StandInOpenAiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.Socket;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(90)
class FailureHandlingTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void shouldEndAStreamWithAnErrorEventEjectTheBackendAndServeLaterRequestsElsewhereWhenDecodeDiesMidStream()
        throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 2))
        {
            harness.start(harness.context().healthIntervalMs(0));
            harness.decode.forEach(decode -> decode.holdStreams(true).tokens(2, 1));
            // one backend holds a stream, so the least loaded choice for the next request is the other one
            final Thread held = Thread.ofVirtual().start(() -> quietly(() ->
                harness.post("/v1/completions", ProxyHarness.streamingCompletion(2))));
            ProxyHarness.await("a backend holds a stream", () ->
                harness.decode.get(0).active() + harness.decode.get(1).active() == 1);
            final StandInOpenAiServer survivor = harness.decode.get(0).active() == 1 ? harness.decode.get(0) :
                harness.decode.get(1);
            final StandInOpenAiServer dying = survivor == harness.decode.get(0) ? harness.decode.get(1) :
                harness.decode.get(0);
            dying.holdStreams(false).tokens(10, 1).dieAfterTokens(3);

            final HttpResponse<String> cut = harness.post("/v1/completions", ProxyHarness.streamingCompletion(10));
            assertThat(cut.statusCode()).isEqualTo(200);
            assertThat(cut.body()).contains("\"text\":\"t2\"").doesNotContain("[DONE]").doesNotContain("\"t3\"");
            final String lastEvent = cut.body().substring(cut.body().lastIndexOf("data: ") + 6).trim();
            assertThat(JSON.readTree(lastEvent).at("/error/message").asText()).contains("failed mid-answer");
            assertThat(harness.proxy.backends().pool(BackendRole.DECODE).find(dying.url()).isHealthy()).isFalse();

            survivor.holdStreams(false);
            survivor.releaseHeld();
            held.join();
            for (int i = 0; i < 3; i++)
            {
                final HttpResponse<String> later = harness.post("/v1/completions",
                    ProxyHarness.streamingCompletion(2));
                assertThat(later.statusCode()).isEqualTo(200);
                assertThat(later.body()).endsWith("data: [DONE]\n\n");
            }
            assertThat(survivor.completed()).isEqualTo(4);
            assertThat(harness.get("/metrics").body())
                .contains("xferd_proxy_errors_total{phase=\"decode\",reason=\"broken\"} 1.0");
        }
    }

    @Test
    void shouldTryAnotherBackendWhenOneRefusesConnections() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(2, 1))
        {
            harness.start(harness.context().healthIntervalMs(0));
            harness.prefill.get(0).kill();
            for (int i = 0; i < 4; i++)
            {
                assertThat(harness.post("/v1/completions", ProxyHarness.streamingCompletion(2)).statusCode())
                    .isEqualTo(200);
            }
            assertThat(harness.prefill.get(1).completed()).isEqualTo(4);
            assertThat(harness.proxy.backends().pool(BackendRole.PREFILL).healthyCount()).isEqualTo(1);
        }
    }

    @Test
    void shouldCancelThePrefillRequestAndNeverStartDecodeWhenTheClientLeavesDuringPrefill() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            final StandInOpenAiServer prefill = harness.prefill.get(0);
            prefill.answerDelayMs(20_000);
            try (Socket client = harness.rawPost("/v1/completions", ProxyHarness.streamingCompletion(5)))
            {
                ProxyHarness.await("prefill has the request", () -> prefill.active() == 1);
            }
            ProxyHarness.await("prefill request cancelled", () -> prefill.cancelled() == 1);
            assertThat(harness.decode.get(0).received()).isEmpty();
            ProxyHarness.await("load released", () ->
                harness.proxy.backends().pool(BackendRole.PREFILL).members().getFirst().outstandingRequests() == 0);
        }
    }

    @Test
    void shouldCancelTheDecodeRequestWhenTheClientLeavesMidStream() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            final StandInOpenAiServer decode = harness.decode.get(0);
            decode.tokens(10_000, 5);
            try (Socket client = harness.rawPost("/v1/completions", ProxyHarness.streamingCompletion(10_000)))
            {
                assertThat(ProxyHarness.readUntil(client.getInputStream(), "\"t2\"")).startsWith("HTTP/1.1 200");
            }
            ProxyHarness.await("decode request cancelled", () -> decode.cancelled() == 1);
            assertThat(decode.completed()).isZero();
            ProxyHarness.await("load released", () ->
                harness.proxy.backends().pool(BackendRole.DECODE).members().getFirst().outstandingRequests() == 0);
            ProxyHarness.await("counted", () -> harness.proxy.metrics().scrape().length > 0 && new String(
                harness.proxy.metrics().scrape()).contains("phase=\"client\",reason=\"disconnected\"} 1.0"));
        }
    }

    @Test
    void shouldAnswer504AndCancelThePrefillWhenThePrefillPhaseTimesOut() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().prefillTimeoutMs(200));
            harness.prefill.get(0).answerDelayMs(20_000);
            final HttpResponse<String> response = harness.post("/v1/completions", ProxyHarness.streamingCompletion(5));
            assertThat(response.statusCode()).isEqualTo(504);
            assertThat(JSON.readTree(response.body()).at("/error/message").asText()).contains("prefill timed out");
            ProxyHarness.await("prefill request cancelled", () -> harness.prefill.get(0).cancelled() == 1);
            assertThat(harness.decode.get(0).received()).isEmpty();
        }
    }

    @Test
    void shouldAnswer504WhenTheDecodeSendsNoFirstTokenInTime() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().firstTokenTimeoutMs(200));
            harness.decode.get(0).answerDelayMs(20_000);
            final HttpResponse<String> response = harness.post("/v1/completions", ProxyHarness.streamingCompletion(5));
            assertThat(response.statusCode()).isEqualTo(504);
            ProxyHarness.await("decode request cancelled", () -> harness.decode.get(0).cancelled() == 1);
        }
    }

    @Test
    void shouldEndAStreamWhoseDecodeBackendFallsSilentWithAnErrorEventAndCancelIt() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().idleTimeoutMs(300));
            harness.decode.get(0).tokens(3, 20_000);
            final HttpResponse<String> response = harness.post("/v1/completions", ProxyHarness.streamingCompletion(3));
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).startsWith("data: {\"object\":\"text_completion\"").doesNotContain("[DONE]")
                .contains("decode idle timed out");
            ProxyHarness.await("decode request cancelled", () -> harness.decode.get(0).cancelled() == 1);
        }
    }

    @Test
    void shouldEjectABackendFailingItsHealthCheckAndBringItBackWhenItPasses() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 2))
        {
            harness.start(harness.context().failuresToEject(2));
            final StandInOpenAiServer sick = harness.decode.get(0);
            final Backend backend = harness.proxy.backends().pool(BackendRole.DECODE).find(sick.url());
            sick.healthy(false);
            ProxyHarness.await("ejected", () -> !backend.isHealthy());
            for (int i = 0; i < 3; i++)
            {
                assertThat(harness.post("/v1/completions", ProxyHarness.streamingCompletion(2)).statusCode())
                    .isEqualTo(200);
            }
            assertThat(sick.received()).isEmpty();
            sick.healthy(true);
            ProxyHarness.await("restored", backend::isHealthy);
        }
    }

    @Test
    void shouldAnswer503WhileNoBackendOfARoleIsHealthy() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context().failuresToEject(1));
            harness.decode.get(0).healthy(false);
            ProxyHarness.await("ejected", () -> harness.proxy.backends().pool(BackendRole.DECODE).healthyCount() == 0);
            final HttpResponse<String> response = harness.post("/v1/completions", ProxyHarness.streamingCompletion(2));
            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(harness.get("/health").statusCode()).isEqualTo(503);
        }
    }

    private interface Action
    {
        void run() throws Exception;
    }

    private static void quietly(final Action action)
    {
        try
        {
            action.run();
        }
        catch (final Exception ignored)
        {
            // the test asserts on the backends' records
        }
    }
}
