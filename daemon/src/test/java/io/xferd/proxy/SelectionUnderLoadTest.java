package io.xferd.proxy;

import io.xferd.proxy.standin.StandInOpenAiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 2P3D behind one proxy: decode streams are held open by the stand-ins, so each new request sees the load the
 * earlier ones left and the choice can be checked exactly.
 */
@Timeout(90)
class SelectionUnderLoadTest
{
    @Test
    void shouldSpreadHeldStreamsEvenlyAndSendNewWorkToTheBackendThatFreedUp() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(2, 3))
        {
            harness.start(harness.context());
            harness.decode.forEach(decode -> decode.holdStreams(true).tokens(2, 1));
            final List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < 6; i++)
            {
                clients.add(send(harness));
                final int expected = i + 1;
                ProxyHarness.await(expected + " streams held", () -> totalActive(harness.decode) == expected);
            }
            for (final StandInOpenAiServer decode : harness.decode)
            {
                assertThat(decode.active()).as(decode.name()).isEqualTo(2);
            }
            assertThat(harness.prefill.get(0).completed() + harness.prefill.get(1).completed()).isEqualTo(6);
            assertThat(harness.prefill.get(0).completed()).isEqualTo(3);

            // decode-1 finishes its two streams: the next two requests must both go there (round robin would not)
            final StandInOpenAiServer freed = harness.decode.get(1);
            freed.holdStreams(false);
            freed.releaseHeld();
            ProxyHarness.await("decode-1 idle", () -> freed.active() == 0);
            ProxyHarness.await("proxy saw it", () ->
                harness.proxy.backends().pool(BackendRole.DECODE).find(freed.url()).outstandingRequests() == 0);
            freed.holdStreams(true);
            for (int i = 0; i < 2; i++)
            {
                clients.add(send(harness));
                final int expected = i + 1;
                ProxyHarness.await("decode-1 holds " + expected, () -> freed.active() == expected);
            }
            assertThat(harness.decode.get(0).completionRequests()).isEqualTo(2);
            assertThat(harness.decode.get(2).completionRequests()).isEqualTo(2);
            assertThat(freed.completionRequests()).isEqualTo(4);

            harness.decode.forEach(decode ->
            {
                decode.holdStreams(false);
                decode.releaseHeld();
            });
            for (final Thread client : clients)
            {
                client.join();
            }
            assertThat(totalCompleted(harness.decode)).isEqualTo(8);
        }
    }

    @Test
    void shouldPreferTheBackendWithFewerTokensInFlightAmongEquallyBusyOnes() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 2))
        {
            harness.start(harness.context());
            harness.decode.forEach(decode -> decode.holdStreams(true).tokens(1, 1));
            final List<Thread> clients = new ArrayList<>();
            clients.add(send(harness, "{\"prompt\":\"" + "long prompt ".repeat(2_000) + "\",\"max_tokens\":1," +
                "\"stream\":true}"));
            ProxyHarness.await("long one held", () -> totalActive(harness.decode) == 1);
            final StandInOpenAiServer heavy = harness.decode.get(0).active() == 1 ? harness.decode.get(0) :
                harness.decode.get(1);
            final StandInOpenAiServer light = heavy == harness.decode.get(0) ? harness.decode.get(1) :
                harness.decode.get(0);
            clients.add(send(harness));
            ProxyHarness.await("short one held", () -> light.active() == 1);
            // one request each; the light one has far fewer tokens in flight, so it gets the next request
            clients.add(send(harness));
            ProxyHarness.await("third held", () -> totalActive(harness.decode) == 3);
            assertThat(light.active()).isEqualTo(2);
            assertThat(heavy.active()).isEqualTo(1);
            harness.decode.forEach(decode ->
            {
                decode.holdStreams(false);
                decode.releaseHeld();
            });
            for (final Thread client : clients)
            {
                client.join();
            }
        }
    }

    private static Thread send(final ProxyHarness harness)
    {
        return send(harness, ProxyHarness.streamingCompletion(2));
    }

    private static Thread send(final ProxyHarness harness, final String body)
    {
        return Thread.ofVirtual().start(() ->
        {
            try
            {
                final var response = harness.post("/v1/completions", body);
                if (response.statusCode() != 200 || !response.body().endsWith("data: [DONE]\n\n"))
                {
                    throw new AssertionError("request failed: " + response.statusCode() + " " + response.body());
                }
            }
            catch (final Exception ex)
            {
                throw new AssertionError(ex);
            }
        });
    }

    private static int totalActive(final List<StandInOpenAiServer> servers)
    {
        return servers.stream().mapToInt(StandInOpenAiServer::active).sum();
    }

    private static int totalCompleted(final List<StandInOpenAiServer> servers)
    {
        return servers.stream().mapToInt(StandInOpenAiServer::completed).sum();
    }
}
