package io.xferd.proxy.standin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;

import java.io.IOException;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stand-in OpenAI-compatible backend for tests and the proxy benchmark: it answers like a vLLM prefill or decode
 * instance (non-streamed JSON, or server-sent events ending with {@code data: [DONE]}), and its behaviour can be
 * changed while it runs: latency, answer length and pace, HTTP errors, holding streams open, dying mid-stream,
 * failing its health check. It records what it received and how each request ended.
 *
 * <p>A prefill request with {@code kv_transfer_params.do_remote_decode} gets an answer with
 * {@code kv_transfer_params} naming this server (as vLLM's prefill engine names its KV blocks), so a test can see
 * that the decode request carried them.
 */
public final class StandInOpenAiServer implements AutoCloseable
{
    /**
     * One request as received.
     *
     * @param path      the request path.
     * @param body      the JSON body, null for none or not JSON.
     * @param requestId its X-Request-Id.
     */
    public record Received(String path, JsonNode body, String requestId)
    {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String name;
    private final Vertx vertx;
    private final HttpServer server;
    private final Queue<Received> received = new ConcurrentLinkedQueue<>();
    private final Queue<Runnable> heldStreams = new ConcurrentLinkedQueue<>();
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicInteger cancelled = new AtomicInteger();
    private final AtomicLong bytesWritten = new AtomicLong();

    private volatile long answerDelayMs;
    private volatile int tokens = 8;
    private volatile long tokenIntervalMs;
    private volatile int tokenPaddingBytes;
    private volatile int failStatus;
    private volatile int dieAfterTokens = -1;
    private volatile boolean holdStreams;
    private volatile boolean healthy = true;

    private StandInOpenAiServer(final String name, final Vertx vertx)
    {
        this.name = name;
        this.vertx = vertx;
        this.server = vertx.createHttpServer();
    }

    /**
     * @param vertx where it runs (tests share one among several stand-ins).
     * @param name  its name, in its answers and kv_transfer_params.
     * @return a server listening on 127.0.0.1 on a free port.
     */
    public static StandInOpenAiServer start(final Vertx vertx, final String name)
    {
        final StandInOpenAiServer standIn = new StandInOpenAiServer(name, vertx);
        try
        {
            standIn.server.requestHandler(standIn::handle).listen(0, "127.0.0.1").toCompletionStage()
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException("stand-in " + name + " did not start", ex);
        }
        return standIn;
    }

    public String url()
    {
        return "http://127.0.0.1:" + server.actualPort();
    }

    public String name()
    {
        return name;
    }

    /** Delay before the answer's head (prefill time; time before a stream starts). */
    public StandInOpenAiServer answerDelayMs(final long delayMs)
    {
        this.answerDelayMs = delayMs;
        return this;
    }

    /** Tokens of a streamed answer, and the pause between them. */
    public StandInOpenAiServer tokens(final int count, final long intervalMs)
    {
        this.tokens = count;
        this.tokenIntervalMs = intervalMs;
        return this;
    }

    /** Extra bytes of padding in each streamed token event (to make a large answer). */
    public StandInOpenAiServer tokenPaddingBytes(final int bytes)
    {
        this.tokenPaddingBytes = bytes;
        return this;
    }

    /** Answer every completion request with this HTTP status and an OpenAI error body; 0: answer normally. */
    public StandInOpenAiServer failStatus(final int status)
    {
        this.failStatus = status;
        return this;
    }

    /** After this many streamed tokens the whole server dies (it closes and cuts every connection); -1: never. */
    public StandInOpenAiServer dieAfterTokens(final int count)
    {
        this.dieAfterTokens = count;
        return this;
    }

    /** Streams wait after their head until {@link #releaseHeld()}. */
    public StandInOpenAiServer holdStreams(final boolean hold)
    {
        this.holdStreams = hold;
        return this;
    }

    public StandInOpenAiServer healthy(final boolean healthy)
    {
        this.healthy = healthy;
        return this;
    }

    /** Lets every held stream go on. */
    public void releaseHeld()
    {
        Runnable next;
        while ((next = heldStreams.poll()) != null)
        {
            next.run();
        }
    }

    public List<Received> received()
    {
        return List.copyOf(received);
    }

    public int completionRequests()
    {
        return (int)received.stream().filter(r -> r.path().startsWith("/v1/") && !r.path().equals("/v1/models"))
            .count();
    }

    public int active()
    {
        return active.get();
    }

    public int completed()
    {
        return completed.get();
    }

    /** Requests whose client closed the connection before the answer was complete. */
    public int cancelled()
    {
        return cancelled.get();
    }

    public long bytesWritten()
    {
        return bytesWritten.get();
    }

    private void handle(final HttpServerRequest request)
    {
        switch (request.path())
        {
            case "/health" -> request.response().setStatusCode(healthy ? 200 : 503).end();
            case "/v1/models" ->
            {
                received.add(new Received(request.path(), null, request.getHeader("X-Request-Id")));
                request.response().putHeader("content-type", "application/json").end("{\"object\":\"list\"," +
                    "\"data\":[{\"id\":\"stand-in\",\"object\":\"model\",\"owned_by\":\"" + name + "\"}]}");
            }
            case "/v1/completions", "/v1/chat/completions" -> request.body().onSuccess(body ->
                completion(request, body));
            default -> request.response().setStatusCode(404).end();
        }
    }

    private void completion(final HttpServerRequest request, final Buffer raw)
    {
        JsonNode body = null;
        try
        {
            body = JSON.readTree(raw.getBytes());
        }
        catch (final IOException ignored)
        {
            // recorded as null: the proxy must never send that
        }
        received.add(new Received(request.path(), body, request.getHeader("X-Request-Id")));
        final HttpServerResponse response = request.response();
        active.incrementAndGet();
        final boolean[] ended = new boolean[1];
        response.closeHandler(ignored ->
        {
            if (!ended[0])
            {
                ended[0] = true;
                active.decrementAndGet();
                cancelled.incrementAndGet();
            }
        });
        final JsonNode parsed = body;
        final Runnable answer = () ->
        {
            if (ended[0])
            {
                return;
            }
            if (failStatus != 0)
            {
                finish(response, ended, failStatus, "{\"error\":{\"message\":\"stand-in " + name + " fails\"," +
                    "\"type\":\"server_error\",\"param\":null,\"code\":" + failStatus + "}}");
            }
            else if (parsed != null && parsed.path("stream").asBoolean(false))
            {
                stream(response, ended, request.path().contains("chat"));
            }
            else
            {
                finish(response, ended, 200, whole(parsed));
            }
        };
        if (answerDelayMs > 0)
        {
            vertx.setTimer(answerDelayMs, ignored -> answer.run());
        }
        else
        {
            answer.run();
        }
    }

    private String whole(final JsonNode request)
    {
        final ObjectNode answer = JSON.createObjectNode();
        answer.put("id", "cmpl-" + name);
        answer.put("object", "text_completion");
        answer.put("model", "stand-in");
        answer.putArray("choices").addObject().put("index", 0).put("text", "t0").put("finish_reason", "length");
        final JsonNode params = request == null ? null : request.get("kv_transfer_params");
        if (params != null && params.path("do_remote_decode").asBoolean(false))
        {
            final ObjectNode kv = answer.putObject("kv_transfer_params");
            kv.put("do_remote_prefill", true);
            kv.put("do_remote_decode", false);
            kv.put("remote_engine_id", name);
            kv.putArray("remote_block_ids").add(1).add(2).add(3);
            kv.put("remote_host", "127.0.0.1");
            kv.put("remote_port", server.actualPort());
        }
        return answer.toString();
    }

    private void finish(final HttpServerResponse response, final boolean[] ended, final int status,
        final String body)
    {
        ended[0] = true;
        active.decrementAndGet();
        completed.incrementAndGet();
        bytesWritten.addAndGet(body.length());
        response.setStatusCode(status).putHeader("content-type", "application/json").end(body);
    }

    private void stream(final HttpServerResponse response, final boolean[] ended, final boolean chat)
    {
        response.setChunked(true).putHeader("content-type", "text/event-stream").putHeader("cache-control",
            "no-cache");
        final String padding = "x".repeat(Math.max(0, tokenPaddingBytes));
        final int count = tokens;
        final int dieAfter = dieAfterTokens;
        final Runnable run = () -> nextToken(response, ended, chat, padding, 0, count, dieAfter);
        if (holdStreams)
        {
            heldStreams.add(() -> vertx.runOnContext(ignored -> run.run()));
        }
        else
        {
            run.run();
        }
    }

    private void nextToken(final HttpServerResponse response, final boolean[] ended, final boolean chat,
        final String padding, final int index, final int count, final int dieAfter)
    {
        if (ended[0])
        {
            return;
        }
        if (index == dieAfter)
        {
            server.close(); // cuts this and every other connection: the backend is gone
            return;
        }
        if (index == count)
        {
            ended[0] = true;
            active.decrementAndGet();
            completed.incrementAndGet();
            bytesWritten.addAndGet(14);
            response.end("data: [DONE]\n\n");
            return;
        }
        final String event = "data: " + (chat ?
            "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t" + index +
                padding + "\"}}]}" :
            "{\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"t" + index + padding + "\"}]}") +
            "\n\n";
        bytesWritten.addAndGet(event.length());
        response.write(event);
        final Runnable next = () -> nextToken(response, ended, chat, padding, index + 1, count, dieAfter);
        if (response.writeQueueFull())
        {
            response.drainHandler(ignored -> next.run());
        }
        else if (tokenIntervalMs > 0)
        {
            vertx.setTimer(tokenIntervalMs, ignored -> next.run());
        }
        else
        {
            vertx.runOnContext(ignored -> next.run());
        }
    }

    /** Stops it as a crash would: the port closes and every connection is cut. */
    public void kill()
    {
        try
        {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException("stand-in " + name + " did not close", ex);
        }
    }

    @Override
    public void close()
    {
        kill();
    }
}
