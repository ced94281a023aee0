package io.xferd.proxy;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;

/**
 * Reads a whole body that must be small (a client's request, a prefill answer, an error), refusing one longer than
 * its limit as soon as the limit is passed instead of after buffering it.
 */
final class BoundedBody
{
    /**
     * What became of the read; exactly one method is called, on the stream's context.
     */
    interface Outcome
    {
        void complete(Buffer body);

        void tooLarge();

        void failed(Throwable cause);
    }

    private BoundedBody()
    {
    }

    static void read(final ReadStream<Buffer> stream, final long expectedLength, final long limit, final Outcome outcome)
    {
        final Buffer body = Buffer.buffer((int)Math.min(Math.max(expectedLength, 256), limit));
        final boolean[] done = new boolean[1];
        stream.handler(chunk ->
        {
            if (done[0])
            {
                return;
            }
            if ((long)body.length() + chunk.length() > limit)
            {
                done[0] = true;
                outcome.tooLarge();
                return;
            }
            body.appendBuffer(chunk);
        });
        stream.exceptionHandler(cause ->
        {
            if (!done[0])
            {
                done[0] = true;
                outcome.failed(cause);
            }
        });
        stream.endHandler(ignored ->
        {
            if (!done[0])
            {
                done[0] = true;
                outcome.complete(body);
            }
        });
    }
}
