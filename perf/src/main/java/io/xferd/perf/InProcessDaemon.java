package io.xferd.perf;

import io.xferd.client.ClientContext;
import io.xferd.client.XferClient;
import io.xferd.daemon.DaemonContext;
import io.xferd.daemon.XferDaemon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * An {@link XferDaemon} started inside the benchmark's JVM on a fresh directory under /dev/shm, with its default
 * threading (one shared data-plane thread plus the conductor) and the idle strategy the benchmark names. Being
 * in-process makes JMH's {@code -prof gc} count the daemon's allocations together with the client's.
 */
final class InProcessDaemon implements AutoCloseable
{
    private final Path directory;
    private final XferDaemon daemon;

    InProcessDaemon(final String idleStrategy)
    {
        try
        {
            directory = Files.createTempDirectory(Path.of("/dev/shm"), "xferd-perf-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        daemon = XferDaemon.launch(new DaemonContext().directory(directory).idleStrategy(idleStrategy));
    }

    /**
     * Connect a client with the library's defaults; {@code -Dxferd.perf.daemonCheckIntervalNs=N} overrides how
     * often an idle poll checks the daemon's liveness (default 1 ms), to isolate that check's cost.
     */
    XferClient connect(final String segmentName)
    {
        final ClientContext context = new ClientContext().directory(directory).segmentName(segmentName);
        final Long checkIntervalNs = Long.getLong("xferd.perf.daemonCheckIntervalNs");
        if (checkIntervalNs != null)
        {
            context.daemonCheckIntervalNs(checkIntervalNs);
        }
        return XferClient.connect(context);
    }

    @Override
    public void close()
    {
        try
        {
            daemon.close();
        }
        finally
        {
            deleteRecursively(directory);
        }
    }

    static void deleteRecursively(final Path root)
    {
        if (!Files.exists(root))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(root))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
