package io.xferd.proxy;

import io.xferd.proxy.standin.StandInOpenAiServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(120)
class StreamingBackpressureTest
{
    private static final int TOKENS = 4_096;
    private static final int PADDING = 16 * 1024;
    private static final long ANSWER_BYTES = (long)TOKENS * PADDING; // 64 MiB of events

    @Test
    void shouldHoldTheBackendBackWhileTheClientDoesNotReadAndDeliverEveryByteWhenItDoes() throws Exception
    {
        try (ProxyHarness harness = new ProxyHarness(1, 1))
        {
            harness.start(harness.context());
            final StandInOpenAiServer decode = harness.decode.get(0);
            decode.tokens(TOKENS, 0).tokenPaddingBytes(PADDING);
            try (Socket client = harness.rawPost("/v1/completions", ProxyHarness.streamingCompletion(TOKENS)))
            {
                client.setReceiveBufferSize(64 * 1024);
                ProxyHarness.await("decode started", () -> decode.bytesWritten() > 0);
                // the client reads nothing: what the backend got out must stop growing well short of the answer
                long before;
                long after = decode.bytesWritten();
                do
                {
                    before = after;
                    Thread.sleep(300);
                    after = decode.bytesWritten();
                }
                while (after != before && after < ANSWER_BYTES);
                assertThat(after).as("bytes the backend wrote while the client read nothing")
                    .isLessThan(ANSWER_BYTES / 2);
                assertThat(decode.completed()).isZero();

                final long[] tokensSeen = new long[1];
                final long received = readAll(client.getInputStream(), tokensSeen);
                assertThat(tokensSeen[0]).as("every token event, in order").isEqualTo(TOKENS);
                assertThat(received).isGreaterThan(ANSWER_BYTES);
            }
            assertThat(decode.completed()).isEqualTo(1);
        }
    }

    /**
     * Reads the chunked SSE answer to its end (decoding the chunked transfer coding), checking the events come in
     * order ("t0", "t1", ...).
     */
    private static long readAll(final InputStream raw, final long[] tokensSeen) throws Exception
    {
        final java.io.BufferedInputStream in = new java.io.BufferedInputStream(raw, 256 * 1024);
        while (!line(in).isEmpty())
        {
            // response head
        }
        final StringBuilder pending = new StringBuilder();
        long total = 0;
        while (true)
        {
            final int size = Integer.parseInt(line(in).trim(), 16);
            if (size == 0)
            {
                break;
            }
            final byte[] chunk = in.readNBytes(size);
            if (chunk.length != size)
            {
                throw new AssertionError("connection closed mid-chunk");
            }
            line(in);
            total += size;
            pending.append(new String(chunk, StandardCharsets.ISO_8859_1));
            int at;
            while ((at = pending.indexOf("\"text\":\"t")) >= 0)
            {
                final int end = pending.indexOf("x", at + 9);
                if (end < 0)
                {
                    break;
                }
                final long token = Long.parseLong(pending.substring(at + 9, end));
                if (token != tokensSeen[0])
                {
                    throw new AssertionError("token " + token + " where " + tokensSeen[0] + " was due");
                }
                tokensSeen[0]++;
                pending.delete(0, end);
            }
            if (pending.length() > 4 * PADDING)
            {
                pending.delete(0, pending.length() - 64);
            }
        }
        assertThat(pending.toString()).endsWith("data: [DONE]\n\n");
        return total;
    }

    private static String line(final InputStream in) throws Exception
    {
        final StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != '\n')
        {
            if (c < 0)
            {
                throw new AssertionError("connection closed before the answer ended");
            }
            if (c != '\r')
            {
                line.append((char)c);
            }
        }
        return line.toString();
    }
}
