package io.xferd.daemon.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The conductor's look at the other daemon threads, on a clock the test moves.
 */
@Timeout(10)
class AgentWatchTest
{
    private final AgentWatch watch = new AgentWatch(100);

    @Test
    void shouldNameTheThreadThatEndedAtTheNextCheck() throws InterruptedException
    {
        final CountDownLatch release = new CountDownLatch(1);
        final Thread alive = Thread.ofPlatform().name("test-alive").start(() -> await(release));
        final Thread dying = Thread.ofPlatform().name("test-dying").unstarted(() -> { });
        watch.watch("intake", () -> alive);
        watch.watch("not started yet", () -> null);
        watch.watch("transfer worker", () -> dying.getState() == Thread.State.NEW ? null : dying);
        try
        {
            assertThatCode(() -> watch.check(1_000)).doesNotThrowAnyException();

            dying.start();
            dying.join();
            assertThatCode(() -> watch.check(1_050)).as("not looked at before the period is over")
                .doesNotThrowAnyException();
            assertThatThrownBy(() -> watch.check(1_100))
                .isInstanceOf(AgentWatch.AgentDiedException.class)
                .hasMessageContaining("transfer worker").hasMessageContaining("test-dying")
                .hasMessageContaining("exit code 70");
            assertThat(alive.isAlive()).isTrue();
        }
        finally
        {
            release.countDown();
            alive.join();
        }
    }

    private static void await(final CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
