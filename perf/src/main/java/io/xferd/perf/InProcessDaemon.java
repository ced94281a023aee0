package io.xferd.perf;

import io.xferd.client.ClientContext;
import io.xferd.client.XferClient;
import io.xferd.daemon.config.DaemonContext;
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
        this(idleStrategy, "on");
    }

    /**
     * @param journal "on" or "off": the daemon's transfer journal (in the daemon's directory, i.e. /dev/shm).
     *                The metrics endpoint stays off (no port to collide on).
     */
    InProcessDaemon(final String idleStrategy, final String journal)
    {
        if (!"on".equals(journal) && !"off".equals(journal))
        {
            throw new IllegalArgumentException("journal must be on or off: " + journal);
        }
        try
        {
            directory = Files.createTempDirectory(Path.of("/dev/shm"), "xferd-perf-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        // a free peer port: another benchmark (or daemon) on the host may hold the default one
        final DaemonContext context = new DaemonContext().directory(directory).idleStrategy(idleStrategy)
            .rpcAddress("127.0.0.1:0");
        context.operations().journalEnabled("on".equals(journal)).metricsAddress("off");
        // -Dxferd.perf.pipelineSize=N: the daemon's pipeline slots, to A/B a size in one build (default: the daemon's)
        final Integer pipelineSize = Integer.getInteger("xferd.perf.pipelineSize");
        if (pipelineSize != null)
        {
            context.pipelineSize(pipelineSize);
        }
        daemon = XferDaemon.launch(context);
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
            if (daemon.context().operations().journalEnabled())
            {
                System.out.printf("%njournal: %,d records dropped (journal ring full) of %,d requests (2 records each)%n",
                    daemon.counters().get(io.xferd.ipc.SystemCounter.JOURNAL_DROPPED).get(),
                    daemon.counters().get(io.xferd.ipc.SystemCounter.REQUESTS_SUBMITTED).get());
            }
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
