package io.xferd.daemon.tools.cli;

import io.xferd.nativebindings.verbs.Verbs;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The daemon's warm-up names classes that exist (a renamed binding would otherwise silently leave the warm-up
 * with nothing to do), initialises them without throwing, and leaves the RDMA probe's answer cached for the start.
 */
class DaemonWarmUpTest
{
    @Test
    void shouldNameOnlyClassesThatExist()
    {
        final ClassLoader loader = DaemonWarmUp.class.getClassLoader();
        for (final String name : DaemonWarmUp.CLASSES)
        {
            assertThatCode(() -> Class.forName(name, false, loader)).as(name).doesNotThrowAnyException();
        }
    }

    @Test
    void shouldInitialiseThemOnItsOwnThreadAndCacheTheProbe() throws InterruptedException
    {
        final Thread thread = DaemonWarmUp.start();
        thread.join(60_000);
        assertThat(thread.isAlive()).isFalse();
        assertThat(thread.isDaemon()).isTrue();
        assertThat(Verbs.availability()).isSameAs(Verbs.availability());
    }
}
