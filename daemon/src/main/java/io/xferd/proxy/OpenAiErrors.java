package io.xferd.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.buffer.Buffer;

/**
 * Error bodies in the OpenAI shape ({@code {"error": {"message", "type", "param", "code"}}}), so that OpenAI client
 * libraries raise their usual exceptions with the proxy's or the backend's message.
 */
public final class OpenAiErrors
{
    private static final int MAX_QUOTED_CHARS = 2_000;

    private OpenAiErrors()
    {
    }

    /**
     * @return an error body for a failure of the proxy itself (or of a backend it could not get an answer from).
     */
    public static Buffer body(final ObjectMapper json, final int status, final String message)
    {
        final ObjectNode root = json.createObjectNode();
        final ObjectNode error = root.putObject("error");
        error.put("message", "xferd proxy: " + message);
        error.put("type", status < 500 ? "invalid_request_error" : "server_error");
        error.putNull("param");
        error.put("code", status);
        return Buffer.buffer(root.toString());
    }

    /**
     * @return what to send the client for a backend's error answer: the backend's own JSON body when it is JSON
     * (vLLM's errors already have the OpenAI shape), else the backend's text quoted in an OpenAI error.
     */
    public static Buffer fromBackend(final ObjectMapper json, final int status, final String phase, final Buffer body)
    {
        try
        {
            final JsonNode parsed = json.readTree(body.getBytes());
            if (parsed != null && parsed.isObject())
            {
                return body;
            }
        }
        catch (final java.io.IOException ignored)
        {
            // not JSON: quote it below
        }
        final String text = body.toString(java.nio.charset.StandardCharsets.UTF_8);
        return body(json, status, phase + " backend answered HTTP " + status + ": " +
            (text.length() > MAX_QUOTED_CHARS ? text.substring(0, MAX_QUOTED_CHARS) + "..." : text));
    }

    /**
     * @return one server-sent event carrying an error, for a stream whose head has already gone to the client.
     */
    public static Buffer event(final ObjectMapper json, final int status, final String message)
    {
        return Buffer.buffer("data: ").appendBuffer(body(json, status, message)).appendString("\n\n");
    }
}
