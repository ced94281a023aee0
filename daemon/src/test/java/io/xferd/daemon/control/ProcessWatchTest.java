package io.xferd.daemon.control;

import io.xferd.daemon.session.ClientSession;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The processes of clients with process memory are watched by pidfd: nothing is reported while they live, a
 * session is reported once its process exited (whatever its socket does), and an unwatched one never is.
 */
@Timeout(30)
class ProcessWatchTest
{
    @Test
    void shouldReportTheSessionWhoseProcessExited() throws Exception
    {
        final Process first = new ProcessBuilder("sleep", "60").start();
        final Process second = new ProcessBuilder("sleep", "60").start();
        try (ProcessWatch watch = new ProcessWatch(4))
        {
            final ClientSession a = session(0, first.pid());
            final ClientSession b = session(1, second.pid());
            assertThat(watch.watch(a)).isTrue();
            assertThat(watch.watch(a)).as("once per session").isTrue();
            assertThat(watch.watch(b)).isTrue();
            assertThat(watch.size()).isEqualTo(2);
            assertThat(watch.poll()).isEmpty();

            second.destroyForcibly();
            assertThat(second.waitFor(20, TimeUnit.SECONDS)).isTrue();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            List<ClientSession> exited = watch.poll();
            while (exited.isEmpty() && System.nanoTime() < deadline)
            {
                Thread.sleep(5);
                exited = watch.poll();
            }
            assertThat(exited).containsExactly(b);

            watch.unwatch(b);
            assertThat(watch.poll()).isEmpty();
            assertThat(watch.size()).isEqualTo(1);
        }
        finally
        {
            first.destroyForcibly();
            second.destroyForcibly();
        }
    }

    @Test
    void shouldRefuseToWatchAProcessThatIsGone()
    {
        try (ProcessWatch watch = new ProcessWatch(1))
        {
            assertThat(watch.watch(session(0, Integer.MAX_VALUE))).isFalse();
            assertThat(watch.size()).isZero();
        }
    }

    private static ClientSession session(final int slot, final long pid)
    {
        final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(4096 + RingBufferDescriptor.TRAILER_LENGTH)));
        return new ClientSession(slot, 1, "s" + slot, "x/s" + slot, (int)pid, 0, 0, null, null, null, ring, null);
    }
}
