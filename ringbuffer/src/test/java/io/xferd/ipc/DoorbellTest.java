package io.xferd.ipc;

import io.xferd.nativebindings.libc.Futex;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writer's side of a ring's doorbell wakes one reader asleep on the word and clears it; a word that the other
 * side keeps arming never makes the writer wait.
 */
@Timeout(30)
class DoorbellTest
{
    private static final int CAPACITY = 4096;
    /** A thread of its own per task: a waiter that sleeps out its hour when the feature breaks holds only that. */
    private static final Executor OWN_THREAD = task -> Thread.ofPlatform().daemon().start(task);
    private static final int WORD = CAPACITY + RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET;

    @Test
    void shouldClearAndWakeAClientAsleepOnTheWord() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final UnsafeBuffer ring = ring(arena);
            final Doorbell doorbell = new Doorbell(ring, RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET);
            final long address = ring.addressOffset() + WORD;
            ring.putIntVolatile(WORD, RingsFileDescriptor.DOORBELL_ASLEEP);
            // the client's sleep is an hour: only the doorbell (a wake, or the cleared word) ends it in time
            final CompletableFuture<Boolean> client = CompletableFuture.supplyAsync(
                () -> Futex.wait(address, RingsFileDescriptor.DOORBELL_ASLEEP, TimeUnit.HOURS.toNanos(1)), OWN_THREAD);
            // asleep in the kernel before the ring: clearing the word alone would not end the wait then
            for (int i = 0; i < 2_000 && threadsAsleepOn(address) == 0; i++)
            {
                Thread.sleep(5);
            }
            assertThat(threadsAsleepOn(address)).as("the client thread sleeps on the word").isEqualTo(1);

            doorbell.ring();

            assertThat(client.get(10, TimeUnit.SECONDS)).as("woken, not timed out").isTrue();
            assertThat(ring.getIntVolatile(WORD)).as("cleared").isZero();
        }
    }

    @Test
    void shouldWakeOneThreadWhateverHowManySleepOnTheWord() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final UnsafeBuffer ring = ring(arena);
            final long address = ring.addressOffset() + WORD;
            ring.putIntVolatile(WORD, RingsFileDescriptor.DOORBELL_ASLEEP);
            final CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(
                () -> Futex.wait(address, RingsFileDescriptor.DOORBELL_ASLEEP, TimeUnit.HOURS.toNanos(1)), OWN_THREAD);
            final CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(
                () -> Futex.wait(address, RingsFileDescriptor.DOORBELL_ASLEEP, TimeUnit.HOURS.toNanos(1)), OWN_THREAD);
            for (int i = 0; i < 2_000 && threadsAsleepOn(address) < 2; i++)
            {
                Thread.sleep(5);
            }
            assertThat(threadsAsleepOn(address)).as("both asleep").isEqualTo(2);

            new Doorbell(ring, RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET).ring();

            assertThat(CompletableFuture.anyOf(first, second).get(10, TimeUnit.SECONDS)).isEqualTo(true);
            assertThat(threadsAsleepOn(address)).as("the other sleeps on").isEqualTo(1);
            Futex.wake(address, 1);
            assertThat(first.get(10, TimeUnit.SECONDS) && second.get(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void shouldLeaveAnUnarmedWordAlone()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final UnsafeBuffer ring = ring(arena);
            ring.putIntVolatile(WORD - 4, 7); // the neighbours are not its business
            ring.putIntVolatile(WORD + 4, 9);

            new Doorbell(ring, RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET).ring();

            assertThat(ring.getIntVolatile(WORD)).isZero();
            assertThat(ring.getIntVolatile(WORD - 4)).isEqualTo(7);
            assertThat(ring.getIntVolatile(WORD + 4)).isEqualTo(9);
        }
    }

    @Test
    void shouldNeverWaitOnAWordAHostileClientKeepsArming() throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            final UnsafeBuffer ring = ring(arena);
            final Doorbell doorbell = new Doorbell(ring, RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET);
            final AtomicBoolean done = new AtomicBoolean();
            final CompletableFuture<Void> hostile = CompletableFuture.runAsync(() ->
            {
                while (!done.get())
                {
                    ring.putIntVolatile(WORD, RingsFileDescriptor.DOORBELL_ASLEEP);
                    ring.putIntVolatile(WORD, -1); // any value, not only 1
                }
            }, OWN_THREAD);
            try
            {
                for (int i = 0; i < 100_000; i++)
                {
                    doorbell.ring(); // returns every time: the test's timeout is the assertion
                }
            }
            finally
            {
                done.set(true);
                hostile.get(10, TimeUnit.SECONDS);
            }
        }
    }

    private static UnsafeBuffer ring(final Arena arena)
    {
        final MemorySegment memory = arena.allocate(CAPACITY + RingsFileDescriptor.TRAILER_LENGTH, 4096);
        return new UnsafeBuffer(memory.address(), (int)memory.byteSize());
    }

    /**
     * @return how many threads of this process are in futex(2) on {@code address} now (/proc's view of their calls).
     */
    private static int threadsAsleepOn(final long address) throws IOException
    {
        final String futex = "aarch64".equals(System.getProperty("os.arch")) ? "98" : "202";
        final String word = "0x" + Long.toHexString(address);
        int count = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task")))
        {
            for (final Path task : (Iterable<Path>)tasks::iterator)
            {
                try
                {
                    final String[] fields = Files.readString(task.resolve("syscall")).trim().split(" ");
                    if (fields.length > 1 && fields[0].equals(futex) && fields[1].equals(word))
                    {
                        count++;
                    }
                }
                catch (final IOException gone)
                {
                    // the thread ended meanwhile
                }
            }
        }
        return count;
    }
}
