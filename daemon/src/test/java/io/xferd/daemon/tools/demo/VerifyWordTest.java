package io.xferd.daemon.tools.demo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decode's wait for {@link DecodeConsumer#VERIFY}: it ends when the word comes, when input ends or says something
 * else, and at its own deadline when a producer side never says anything.
 */
@Timeout(30)
class VerifyWordTest
{
    @Test
    void shouldGiveUpAtItsDeadlineWhenTheProducerSideNeverSaysTheWord() throws Exception
    {
        try (PipedOutputStream producer = new PipedOutputStream();
            PipedInputStream decodeInput = new PipedInputStream(producer))
        {
            assertThat(VerifyWord.await(decodeInput, 200)).isEqualTo(VerifyWord.Outcome.EXPIRED);
        }
    }

    @Test
    void shouldTakeTheWordWhenItComes() throws Exception
    {
        assertThat(VerifyWord.await(input(DecodeConsumer.VERIFY + "\n"), 10_000)).isEqualTo(VerifyWord.Outcome.VERIFY);
    }

    @Test
    void shouldRefuseEndOfInputOrAnotherLine() throws Exception
    {
        assertThat(VerifyWord.await(input(""), 10_000)).isEqualTo(VerifyWord.Outcome.REFUSED);
        assertThat(VerifyWord.await(input("VERIFIED\n"), 10_000)).isEqualTo(VerifyWord.Outcome.REFUSED);
    }

    @Test
    void shouldTakeTheWordWrittenLaterWithinTheDeadline() throws Exception
    {
        try (PipedOutputStream producer = new PipedOutputStream();
            PipedInputStream decodeInput = new PipedInputStream(producer))
        {
            final Thread writer = Thread.ofPlatform().start(() -> write(producer, DecodeConsumer.VERIFY + "\n"));

            assertThat(VerifyWord.await(decodeInput, 20_000)).isEqualTo(VerifyWord.Outcome.VERIFY);
            writer.join();
        }
    }

    private static ByteArrayInputStream input(final String text)
    {
        return new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8));
    }

    private static void write(final PipedOutputStream out, final String text)
    {
        try
        {
            out.write(text.getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
