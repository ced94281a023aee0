package io.xferd.proxy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 1,000 streaming requests at once through 2P2D on this small machine: every one answered in full, none lost.
 */
@Timeout(180)
class ThousandStreamsTest
{
    private static final int STREAMS = 1_000;
    private static final int TOKENS = 5;

    @Test
    void shouldAnswerEveryOneOfAThousandConcurrentStreamsInFull() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(2, 2))
        {
            harness.start(harness.context().healthIntervalMs(1_000));
            harness.decode.forEach(decode -> decode.tokens(TOKENS, 20));
            harness.prefill.forEach(prefill -> prefill.answerDelayMs(5));
            final Vertx clientVertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
            try
            {
                final HttpClient client = clientVertx.createHttpClient(new HttpClientOptions().setKeepAlive(false),
                    new PoolOptions().setHttp1MaxSize(STREAMS));
                final List<Future<String>> answers = new ArrayList<>(STREAMS);
                for (int i = 0; i < STREAMS; i++)
                {
                    final String id = "stream-" + i;
                    answers.add(client.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                            .setPort(harness.proxy.port()).setURI("/v1/completions").putHeader("X-Request-Id", id)
                            .putHeader("content-type", "application/json"))
                        .compose(request -> request.send(Buffer.buffer(ProxyHarness.streamingCompletion(TOKENS))))
                        .compose(response -> response.body().map(body ->
                            response.statusCode() + " " + response.getHeader("X-Request-Id") + " " + body)));
                }
                Future.join(answers).toCompletionStage().toCompletableFuture().get(150, TimeUnit.SECONDS);
                final StringBuilder expected = new StringBuilder();
                for (int t = 0; t < TOKENS; t++)
                {
                    expected.append("data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"t")
                        .append(t).append("\"}]}\n\n");
                }
                expected.append("data: [DONE]\n\n");
                for (int i = 0; i < STREAMS; i++)
                {
                    assertThat(answers.get(i).succeeded()).as("stream %d", i).isTrue();
                    assertThat(answers.get(i).result()).isEqualTo("200 stream-" + i + " " + expected);
                }
            }
            finally
            {
                clientVertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            }
            final int decoded = harness.decode.get(0).completed() + harness.decode.get(1).completed();
            assertThat(decoded).isEqualTo(STREAMS);
            assertThat(harness.decode.get(0).completed()).isGreaterThan(STREAMS / 4);
            assertThat(harness.decode.get(1).completed()).isGreaterThan(STREAMS / 4);
            assertThat(harness.prefill.get(0).completed() + harness.prefill.get(1).completed()).isEqualTo(STREAMS);
        }
    }
}
