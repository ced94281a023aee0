package io.xferd.daemon;

import io.xferd.client.ClientContext;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.SystemCounter;
import org.agrona.IoUtil;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

/**
 * What the system tests share: short daemon directories (a Unix socket path must stay under 107 bytes), bounded
 * waits on counters and conditions, and seeded random data that both sides of a transfer can regenerate.
 */
final class SystemTests
{
    /**
     * Upper bound of every wait for something that must happen. Generous: a child JVM daemon takes 30-50 s to
     * serve on a 2-core machine at a load of 15 (seen while other builds ran); a bound only ends a hang.
     */
    static final Duration WAIT = Duration.ofSeconds(60);
    /**
     * Upper bound of the wait for a child JVM daemon's "serving" line: at a load of 30 (the process-level suite run
     * five times in a row beside six builds) two of them took 74 s and 61 s; under the child watchdog's 180 s.
     */
    static final Duration DAEMON_START = Duration.ofSeconds(150);
    /** The cluster token of the daemons a test starts (each would otherwise make its own token file). */
    static final String CLUSTER_TOKEN = "system-test-cluster-token-0123456789abcdef";

    private SystemTests()
    {
    }

    /**
     * A fresh directory for one daemon, short enough for its socket path.
     */
    static Path newDaemonDirectory()
    {
        try
        {
            return Files.createTempDirectory(Path.of("/dev/shm"), "xt");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    static void deleteRecursively(final Path directory)
    {
        if (directory == null || !Files.exists(directory))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * A daemon in this JVM with its defaults (its idle strategy backs off to parking, kind to a 2-core host).
     */
    static DaemonContext daemonContext(final Path directory)
    {
        final DaemonContext context =
            new DaemonContext().directory(directory).rpcAddress("127.0.0.1:0").clusterToken(CLUSTER_TOKEN);
        context.operations().metricsAddress("127.0.0.1:0"); // metrics served, on a free port: never 9464
        return context;
    }

    /**
     * A token file with {@link #CLUSTER_TOKEN} (mode 0600) for daemons started as processes
     * ({@code --cluster-token-file}), so that they and the in-process ones are one cluster.
     */
    static Path clusterTokenFile(final Path directory)
    {
        try
        {
            final Path file = directory.resolve("test-cluster.token");
            if (!Files.exists(file))
            {
                Files.writeString(file, CLUSTER_TOKEN + "\n");
                Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            }
            return file;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    static ClientContext clientContext(final Path directory, final String segmentName)
    {
        return new ClientContext().directory(directory).segmentName(segmentName).controlTimeoutMs(10_000);
    }

    static long counter(final XferDaemon daemon, final SystemCounter counter)
    {
        return daemon.counters().get(counter).get();
    }

    /**
     * A system counter of a daemon in another process (or namespace), read from its cnc file.
     */
    static long cncCounter(final Path daemonDirectory, final SystemCounter counter)
    {
        final MappedByteBuffer mapped =
            IoUtil.mapExistingFile(daemonDirectory.resolve(CncFileDescriptor.CNC_FILE).toFile(), "cnc");
        try
        {
            final UnsafeBuffer cnc = new UnsafeBuffer(mapped);
            return new CountersReader(CncFileDescriptor.countersMetadataBuffer(cnc),
                CncFileDescriptor.countersValuesBuffer(cnc)).getCounterValue(counter.id());
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
    }

    /**
     * Wait (bounded) until a counter's value satisfies the condition.
     */
    static long awaitCounter(
        final XferDaemon daemon, final SystemCounter counter, final LongPredicate condition, final String what)
    {
        awaitCondition(() -> condition.test(counter(daemon, counter)), WAIT,
            () -> what + " (counter '" + counter.label() + "' is " + counter(daemon, counter) + ")");
        return counter(daemon, counter);
    }

    static void awaitCondition(final BooleanSupplier condition, final Duration timeout, final Describer describer)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final SleepingMillisIdleStrategy idle = new SleepingMillisIdleStrategy(1);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("not within " + timeout.toMillis() + " ms: " + describer.describe());
            }
            idle.idle();
        }
    }

    @FunctionalInterface
    interface Describer
    {
        String describe();
    }

    /**
     * Seeded random bytes: the writer fills memory with them, the reader regenerates them to check.
     */
    static byte[] randomBytes(final long seed, final int length)
    {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    static void fill(final MemorySegment memory, final long seed)
    {
        MemorySegment.copy(MemorySegment.ofArray(randomBytes(seed, Math.toIntExact(memory.byteSize()))), 0,
            memory, 0, memory.byteSize());
    }

    /**
     * @return the first offset in {@code memory[offset, offset + length)} that differs from the same range of
     * the seed's data, or -1 when all match.
     */
    static long firstMismatch(final MemorySegment memory, final long offset, final byte[] expected,
        final long expectedOffset, final long length)
    {
        final long mismatch = MemorySegment.mismatch(memory, offset, offset + length,
            MemorySegment.ofArray(expected), expectedOffset, expectedOffset + length);
        return mismatch < 0 ? -1 : mismatch;
    }
}
