package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class FutexWaitTest
{
    /** A thread of its own: a waiter that sleeps out its hour when the wake breaks holds only that. */
    private static final Executor OWN_THREAD = task -> Thread.ofPlatform().daemon().start(task);

    @Test
    @Timeout(10)
    void shouldReturnAtOnceWhenTheWordDoesNotHoldTheExpectedValue()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment word = arena.allocate(4, 4);
            word.set(ValueLayout.JAVA_INT, 0, 0);

            // an hour's timeout: only the value check can end this wait
            assertThat(Futex.wait(word.address(), 1, TimeUnit.HOURS.toNanos(1))).isFalse();
        }
    }

    @Test
    @Timeout(10)
    void shouldReturnFalseAtTheTimeout()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment word = arena.allocate(4, 4);
            word.set(ValueLayout.JAVA_INT, 0, 1);

            assertThat(Futex.wait(word.address(), 1, TimeUnit.MILLISECONDS.toNanos(5))).isFalse();
        }
    }

    @Test
    @Timeout(30)
    void shouldBeWokenByAWakeOnTheSameWord() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment word = arena.allocate(4, 4);
            word.set(ValueLayout.JAVA_INT, 0, 1);
            // an hour's timeout: only the wake can end this wait within the test's timeout
            final CompletableFuture<Boolean> woken = CompletableFuture.supplyAsync(
                () -> Futex.wait(word.address(), 1, TimeUnit.HOURS.toNanos(1)), OWN_THREAD);

            int wakes = 0;
            while (!woken.isDone() && wakes < 10_000)
            {
                wakes += Futex.wake(word.address(), Integer.MAX_VALUE);
                Thread.sleep(1);
            }

            assertThat(woken.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(wakes).isEqualTo(1);
        }
    }
}
