package io.xferd.client;

import java.nio.charset.StandardCharsets;

/**
 * A message a writer attached to a WRITE into this client's segment, delivered after the bytes landed.
 *
 * @param source  the full name of the writer's segment.
 * @param message the writer's bytes.
 * @param traceId the writer's trace id of that WRITE, or 0.
 */
public record Notification(String source, byte[] message, long traceId)
{
    public String messageAsString()
    {
        return new String(message, StandardCharsets.UTF_8);
    }
}
