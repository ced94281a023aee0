package io.xferd.proxy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.AsyncResult;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.RequestOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * One completion request through the proxy: read the client's body, send the prefill request to the least loaded
 * prefill backend, then the decode request (with the prefill answer's KV parameters in V1) to the least loaded
 * decode backend, and stream the decode answer to the client as it comes, pausing the backend while the client is
 * behind. A client that goes away cancels whichever backend request is in flight; each phase has its own timeout.
 *
 * <p>Every callback runs on the event loop of the client's connection (the backend client is used from that
 * context), so the exchange's state needs no locks.
 */
final class DisaggregatedExchange
{
    private static final Logger LOG = LoggerFactory.getLogger(DisaggregatedExchange.class);
    private static final int MAX_CONNECT_ATTEMPTS = 3;
    private static final long NO_TIMER = -1;

    private final ProxyResources shared;
    private final HttpServerRequest request;
    private final HttpServerResponse response;
    private final String endpoint;
    private final String requestId;

    private ObjectNode clientBody;
    private RequestCost cost;
    private boolean finished;
    private long timerId = NO_TIMER;

    private Backend prefillBackend;
    private HttpClientRequest prefillRequest;
    private Backend decodeBackend;
    private HttpClientRequest decodeRequest;
    private HttpClientResponse decodeResponse;
    private boolean streamingEvents;
    private boolean firstChunkSeen;
    private boolean clientBehind;

    private long bodyReceivedNanos;
    private long prefillSentNanos;
    private long prefillAnsweredNanos;
    private long decodeHeadNanos;
    private long lastChunkNanos;

    DisaggregatedExchange(
        final ProxyResources shared, final HttpServerRequest request, final String endpoint, final String requestId)
    {
        this.shared = shared;
        this.request = request;
        this.response = request.response();
        this.endpoint = endpoint;
        this.requestId = requestId;
    }

    void start()
    {
        response.closeHandler(ignored -> onClientGone());
        final long limit = shared.context().maxBodyBytes();
        final String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
        long expected = 0;
        if (length != null)
        {
            try
            {
                expected = Long.parseLong(length.trim());
            }
            catch (final NumberFormatException ex)
            {
                fail(400, "request", "bad_content_length", "Content-Length is not a number", null);
                return;
            }
            if (expected > limit)
            {
                fail(413, "request", "too_large", "request body of " + expected + " bytes is over the limit of " +
                    limit + " bytes", null);
                return;
            }
        }
        if ("100-continue".equalsIgnoreCase(request.getHeader(HttpHeaders.EXPECT)))
        {
            response.writeContinue();
        }
        BoundedBody.read(request, expected, limit, new BoundedBody.Outcome()
        {
            public void complete(final Buffer body)
            {
                onClientBody(body);
            }

            public void tooLarge()
            {
                fail(413, "request", "too_large", "request body is over the limit of " + limit + " bytes", null);
            }

            public void failed(final Throwable cause)
            {
                fail(400, "request", "read_failed", "request body not read: " + cause.getMessage(), null);
            }
        });
    }

    private void onClientBody(final Buffer body)
    {
        if (finished)
        {
            return;
        }
        bodyReceivedNanos = shared.clock().nanoTime();
        final JsonNode parsed;
        try
        {
            parsed = shared.json().readTree(body.getBytes());
        }
        catch (final IOException ex)
        {
            fail(400, "request", "malformed_json", "request body is not valid JSON: " + firstLine(ex), null);
            return;
        }
        if (parsed == null || !parsed.isObject())
        {
            fail(400, "request", "not_an_object", "request body must be a JSON object", null);
            return;
        }
        clientBody = (ObjectNode)parsed;
        streamingEvents = clientBody.path("stream").asBoolean(false);
        cost = RequestCost.of(clientBody);
        sendPrefill(1);
    }

    private void sendPrefill(final int attempt)
    {
        final Backend backend = shared.prefill().select();
        if (backend == null)
        {
            fail(503, "prefill", "no_backend", "no healthy prefill backend", null);
            return;
        }
        prefillBackend = backend;
        backend.acquire(cost.promptTokens());
        final Buffer body = encode(shared.rewriter().prefillRequest(clientBody));
        prefillSentNanos = shared.clock().nanoTime();
        arm(shared.context().prefillTimeoutMs(), "prefill");
        shared.client().request(options(backend, false)).onComplete(connected ->
        {
            if (finished)
            {
                resetIfOpen(connected);
                return;
            }
            if (connected.failed())
            {
                unreachable(backend, connected.cause());
                releasePrefill();
                if (attempt < MAX_CONNECT_ATTEMPTS && shared.prefill().healthyCount() > 0)
                {
                    sendPrefill(attempt + 1);
                }
                else
                {
                    fail(502, "prefill", "unreachable", "prefill backend " + backend.address() + " unreachable: " +
                        connected.cause().getMessage(), null);
                }
                return;
            }
            prefillRequest = connected.result();
            prefillRequest.send(body).onComplete(this::onPrefillHead);
        });
    }

    private void onPrefillHead(final AsyncResult<HttpClientResponse> answered)
    {
        if (finished)
        {
            return;
        }
        final Backend backend = prefillBackend;
        if (answered.failed())
        {
            unreachable(backend, answered.cause());
            fail(502, "prefill", "broken", "prefill backend " + backend.address() + " failed: " +
                answered.cause().getMessage(), null);
            return;
        }
        final HttpClientResponse answer = answered.result();
        BoundedBody.read(answer, 0, shared.context().maxPrefillAnswerBytes(), new BoundedBody.Outcome()
        {
            public void complete(final Buffer body)
            {
                onPrefillAnswer(answer.statusCode(), body);
            }

            public void tooLarge()
            {
                fail(502, "prefill", "answer_too_large", "prefill answer over " +
                    shared.context().maxPrefillAnswerBytes() + " bytes", null);
            }

            public void failed(final Throwable cause)
            {
                if (!finished)
                {
                    unreachable(backend, cause);
                    fail(502, "prefill", "broken", "prefill backend " + backend.address() + " failed mid-answer: " +
                        cause.getMessage(), null);
                }
            }
        });
    }

    private void onPrefillAnswer(final int status, final Buffer body)
    {
        if (finished)
        {
            return;
        }
        prefillAnsweredNanos = shared.clock().nanoTime();
        disarm();
        prefillRequest = null;
        final Backend answeredBy = prefillBackend;
        releasePrefill();
        shared.metrics().prefillNanos(prefillAnsweredNanos - prefillSentNanos);
        if (status / 100 != 2)
        {
            fail(status, "prefill", "http_" + status, "prefill backend answered HTTP " + status,
                OpenAiErrors.fromBackend(shared.json(), status, "prefill", body));
            return;
        }
        JsonNode answer = null;
        if (shared.rewriter().mode() == DisaggMode.V1)
        {
            try
            {
                answer = shared.json().readTree(body.getBytes());
            }
            catch (final IOException ex)
            {
                fail(502, "prefill", "malformed_answer", "prefill answer is not JSON: " + firstLine(ex), null);
                return;
            }
            if (!RequestRewriter.hasTransferParams(answer))
            {
                // as vLLM's own proxy does: decode still answers, computing the prompt itself
                shared.metrics().error("prefill", "no_kv_transfer_params");
                LOG.warn("request {}: prefill answer from {} has no kv_transfer_params; decode recomputes",
                    requestId, answeredBy);
            }
        }
        sendDecode(encode(shared.rewriter().decodeRequest(clientBody, answer)), 1);
    }

    private void sendDecode(final Buffer body, final int attempt)
    {
        final Backend backend = shared.decode().select();
        if (backend == null)
        {
            fail(503, "decode", "no_backend", "no healthy decode backend", null);
            return;
        }
        decodeBackend = backend;
        backend.acquire(cost.decodeTokens());
        arm(shared.context().firstTokenTimeoutMs(), "decode first token");
        shared.client().request(options(backend, true)).onComplete(connected ->
        {
            if (finished)
            {
                resetIfOpen(connected);
                return;
            }
            if (connected.failed())
            {
                unreachable(backend, connected.cause());
                releaseDecode();
                if (attempt < MAX_CONNECT_ATTEMPTS && shared.decode().healthyCount() > 0)
                {
                    sendDecode(body, attempt + 1);
                }
                else
                {
                    fail(502, "decode", "unreachable", "decode backend " + backend.address() + " unreachable: " +
                        connected.cause().getMessage(), null);
                }
                return;
            }
            decodeRequest = connected.result();
            decodeRequest.send(body).onComplete(this::onDecodeHead);
        });
    }

    private void onDecodeHead(final AsyncResult<HttpClientResponse> answered)
    {
        if (finished)
        {
            return;
        }
        final Backend backend = decodeBackend;
        if (answered.failed())
        {
            unreachable(backend, answered.cause());
            fail(502, "decode", "broken", "decode backend " + backend.address() + " failed: " +
                answered.cause().getMessage(), null);
            return;
        }
        decodeResponse = answered.result();
        decodeHeadNanos = shared.clock().nanoTime();
        shared.metrics().handoverNanos(decodeHeadNanos - prefillAnsweredNanos);
        final int status = decodeResponse.statusCode();
        if (status / 100 != 2)
        {
            BoundedBody.read(decodeResponse, 0, shared.context().maxPrefillAnswerBytes(), new BoundedBody.Outcome()
            {
                public void complete(final Buffer body)
                {
                    decodeRequest = null; // answered in full: its connection may serve another request
                    fail(status, "decode", "http_" + status, "decode backend answered HTTP " + status,
                        OpenAiErrors.fromBackend(shared.json(), status, "decode", body));
                }

                public void tooLarge()
                {
                    fail(502, "decode", "answer_too_large", "decode error answer too large", null);
                }

                public void failed(final Throwable cause)
                {
                    fail(502, "decode", "broken", "decode backend failed: " + cause.getMessage(), null);
                }
            });
            return;
        }
        response.setStatusCode(status);
        Headers.toClient(decodeResponse.headers(), response);
        final String type = decodeResponse.getHeader(HttpHeaders.CONTENT_TYPE);
        streamingEvents = type != null && type.startsWith("text/event-stream");
        decodeResponse.handler(this::onDecodeChunk);
        decodeResponse.exceptionHandler(this::onDecodeBroken);
        decodeResponse.endHandler(ignored -> onDecodeEnd());
    }

    private void onDecodeChunk(final Buffer chunk)
    {
        if (finished)
        {
            return;
        }
        lastChunkNanos = shared.clock().nanoTime();
        if (!firstChunkSeen)
        {
            firstChunkSeen = true;
            shared.metrics().firstDecodeTokenNanos(lastChunkNanos - decodeHeadNanos);
            shared.metrics().timeToFirstTokenNanos(lastChunkNanos - bodyReceivedNanos);
            disarm();
            armIdleWatch(shared.context().idleTimeoutMs());
        }
        response.write(chunk);
        if (response.writeQueueFull())
        {
            // the client is behind: stop reading the backend until the client has taken what is queued
            clientBehind = true;
            decodeResponse.pause();
            response.drainHandler(ignored ->
            {
                clientBehind = false;
                lastChunkNanos = shared.clock().nanoTime();
                if (!finished)
                {
                    decodeResponse.resume();
                }
            });
        }
    }

    private void onDecodeEnd()
    {
        if (finished)
        {
            return;
        }
        if (!firstChunkSeen)
        {
            final long now = shared.clock().nanoTime();
            shared.metrics().firstDecodeTokenNanos(now - decodeHeadNanos);
            shared.metrics().timeToFirstTokenNanos(now - bodyReceivedNanos);
        }
        finished = true;
        disarm();
        decodeRequest = null;
        releaseDecode();
        response.end();
        shared.metrics().request(endpoint, response.getStatusCode());
    }

    private void onDecodeBroken(final Throwable cause)
    {
        if (finished)
        {
            return;
        }
        final Backend backend = decodeBackend;
        unreachable(backend, cause);
        fail(502, "decode", "broken", "decode backend " + backend.address() + " failed mid-answer: " +
            cause.getMessage(), null);
    }

    private void onClientGone()
    {
        if (finished)
        {
            return;
        }
        finished = true;
        disarm();
        final String phase = decodeBackend != null ? "decode" : prefillBackend != null ? "prefill" : "request";
        cancelBackends();
        shared.metrics().error("client", "disconnected");
        shared.metrics().request(endpoint, 499);
        LOG.info("request {}: client disconnected during {}; backend requests cancelled", requestId, phase);
    }

    private void onTimeout(final String phase)
    {
        if (!finished)
        {
            fail(504, phase.startsWith("prefill") ? "prefill" : "decode", "timeout", phase + " timed out", null);
        }
    }

    /**
     * Ends the exchange with an error: an OpenAI-style body with that status while nothing has been sent, an error
     * event when a stream has started, a cut connection when a plain body has started (it cannot be completed).
     */
    private void fail(final int status, final String phase, final String reason, final String message,
        final Buffer backendBody)
    {
        if (finished)
        {
            return;
        }
        finished = true;
        disarm();
        cancelBackends();
        shared.metrics().error(phase, reason);
        shared.metrics().request(endpoint, status);
        LOG.warn("request {}: {} failed ({}): HTTP {} {}", requestId, phase, reason, status, message);
        if (!response.headWritten())
        {
            final Buffer body = backendBody != null ? backendBody : OpenAiErrors.body(shared.json(), status, message);
            response.headers().clear();
            response.setChunked(false);
            response.setStatusCode(status)
                .putHeader(Headers.REQUEST_ID, requestId)
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
            if ("request".equals(phase))
            {
                // the body may still be arriving: say so, and do not read it
                response.putHeader(HttpHeaders.CONNECTION, "close");
                response.end(body).onComplete(ignored -> request.connection().close());
            }
            else
            {
                response.end(body);
            }
        }
        else if (streamingEvents)
        {
            response.write(OpenAiErrors.event(shared.json(), status, message));
            response.end();
        }
        else
        {
            response.reset();
        }
    }

    private void cancelBackends()
    {
        // on HTTP/1.1 a reset closes the backend's connection, which is how vLLM learns to abort the request
        if (prefillRequest != null)
        {
            prefillRequest.reset();
            prefillRequest = null;
        }
        if (decodeRequest != null)
        {
            decodeRequest.reset();
            decodeRequest = null;
        }
        releasePrefill();
        releaseDecode();
    }

    private void releasePrefill()
    {
        if (prefillBackend != null)
        {
            prefillBackend.release(cost.promptTokens());
            prefillBackend = null;
        }
    }

    private void releaseDecode()
    {
        if (decodeBackend != null)
        {
            decodeBackend.release(cost.decodeTokens());
            decodeBackend = null;
        }
    }

    /**
     * A refused or broken connection ejects the backend at once; a timeout does not (an overloaded backend is slow
     * to accept, and ejecting it would only pile its load onto the others): the health probes decide about it.
     */
    private void unreachable(final Backend backend, final Throwable cause)
    {
        if (backend != null && !isTimeout(cause) &&
            backend.onUnreachable(String.valueOf(cause.getMessage()), shared.clock().nanoTime()))
        {
            LOG.warn("{} ejected: {}", backend, cause.getMessage());
        }
    }

    static boolean isTimeout(final Throwable cause)
    {
        return cause instanceof java.util.concurrent.TimeoutException ||
            cause instanceof io.netty.channel.ConnectTimeoutException ||
            cause.getClass().getSimpleName().contains("Timeout");
    }

    private static void resetIfOpen(final AsyncResult<HttpClientRequest> connected)
    {
        if (connected.succeeded())
        {
            connected.result().reset();
        }
    }

    private RequestOptions options(final Backend backend, final boolean keepEncoding)
    {
        final RequestOptions options = new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setHost(backend.address().host())
            .setPort(backend.address().port())
            .setURI(backend.address().basePath() + request.uri())
            .setConnectTimeout(shared.context().connectTimeoutMs());
        Headers.toBackend(request.headers(), options, keepEncoding);
        options.putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
        options.putHeader(Headers.REQUEST_ID, requestId);
        return options;
    }

    private Buffer encode(final ObjectNode body)
    {
        try
        {
            return Buffer.buffer(shared.json().writeValueAsBytes(body));
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalStateException("a parsed JSON tree did not serialise", ex);
        }
    }

    private void arm(final long timeoutMs, final String phase)
    {
        disarm();
        if (timeoutMs > 0)
        {
            timerId = shared.vertx().setTimer(timeoutMs, ignored ->
            {
                timerId = NO_TIMER;
                onTimeout(phase);
            });
        }
    }

    /**
     * One timer per idle period, not per chunk: when it fires it checks how long ago the last chunk came, and sleeps
     * again for the rest. Time the client spends behind does not count against the backend.
     */
    private void armIdleWatch(final long idleMs)
    {
        if (idleMs <= 0)
        {
            return;
        }
        timerId = shared.vertx().setTimer(idleMs, ignored ->
        {
            timerId = NO_TIMER;
            if (finished)
            {
                return;
            }
            final long idleNanos = shared.clock().nanoTime() - lastChunkNanos;
            final long limitNanos = shared.context().idleTimeoutMs() * 1_000_000L;
            if (clientBehind || idleNanos < limitNanos)
            {
                armIdleWatch(clientBehind ? limitNanos / 1_000_000L :
                    Math.max(1, (limitNanos - idleNanos) / 1_000_000L));
            }
            else
            {
                onTimeout("decode idle");
            }
        });
    }

    private void disarm()
    {
        if (timerId != NO_TIMER)
        {
            shared.vertx().cancelTimer(timerId);
            timerId = NO_TIMER;
        }
    }

    private static String firstLine(final Exception ex)
    {
        final String message = String.valueOf(ex.getMessage());
        final int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
