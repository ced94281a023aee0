package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AffinityTest
{
    @Test
    @Timeout(10)
    void shouldPinThreadToAnAllowedCpuAndReadItBack() throws Exception
    {
        final AtomicReference<int[]> before = new AtomicReference<>();
        final AtomicReference<int[]> pinned = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        // A thread of its own, so the test runner's thread keeps its affinity.
        final Thread thread = Thread.ofPlatform().name("affinity-test").start(() ->
        {
            try
            {
                final int[] allowed = Affinity.currentAffinity();
                before.set(allowed);
                Affinity.pinCurrentThread(allowed[allowed.length - 1]);
                pinned.set(Affinity.currentAffinity());
                Affinity.pinCurrentThread(allowed);
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        });
        thread.join();
        assertThat(failure.get()).isNull();
        final int[] allowed = before.get();
        assertThat(allowed).isNotEmpty().isSorted();
        assertThat(allowed.length).isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors() * 64);
        assertThat(pinned.get()).containsExactly(allowed[allowed.length - 1]);
    }

    @Test
    @Timeout(10)
    void shouldRejectEmptyOrNegativeCpuLists()
    {
        assertThatThrownBy(Affinity::pinCurrentThread).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Affinity.pinCurrentThread(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
