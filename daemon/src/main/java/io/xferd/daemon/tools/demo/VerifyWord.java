package io.xferd.daemon.tools.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Decode's wait for the word that lets it check the bytes ({@link DecodeConsumer#VERIFY}) on its standard input,
 * with a deadline of its own: decode run alone (by hand, or by a harness other than the demo) must not wait for ever
 * on a producer side that never says it.
 */
final class VerifyWord
{
    /** What the wait came to. */
    enum Outcome
    {
        /** The word came: the producer saw every completion of the timed pass. */
        VERIFY,
        /** End of input or another line: the producer failed, nothing is to be verified. */
        REFUSED,
        /** Nothing came before the deadline. */
        EXPIRED
    }

    private VerifyWord()
    {
    }

    /**
     * @param in        where the word comes from, a line of its own
     * @param timeoutMs the longest wait
     * @return what came, or {@link Outcome#EXPIRED}; the line is read by a daemon thread, left blocked on expiry
     */
    static Outcome await(final InputStream in, final long timeoutMs) throws InterruptedException
    {
        final CompletableFuture<String> line = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("decode-verify-word").start(() -> line.complete(readLine(in)));
        try
        {
            return DecodeConsumer.VERIFY.equals(line.get(timeoutMs, TimeUnit.MILLISECONDS)) ?
                Outcome.VERIFY : Outcome.REFUSED;
        }
        catch (final TimeoutException ex)
        {
            return Outcome.EXPIRED;
        }
        catch (final ExecutionException ex)
        {
            return Outcome.REFUSED; // readLine does not throw: kept for the compiler
        }
    }

    private static String readLine(final InputStream in)
    {
        try
        {
            return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).readLine();
        }
        catch (final IOException ex)
        {
            return null;
        }
    }
}
