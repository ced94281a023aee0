package io.xferd.daemon.cli;

import io.xferd.daemon.DaemonContext;
import io.xferd.daemon.ThreadingMode;
import io.xferd.daemon.XferDaemon;
import io.xferd.daemon.ipc.DaemonAlreadyRunningException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import sun.misc.Signal;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * {@code xferd daemon}: run the per-host daemon in the foreground until SIGTERM or SIGINT, then drain, free
 * everything and exit 0.
 */
@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run the per-host transfer daemon in the foreground (embedded defaults, no config needed).")
public final class DaemonCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--dir", description = "Runtime directory (default: ${DEFAULT-VALUE}).")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    @Option(names = "--threading", description = "SHARED (one data-plane thread, for small hosts) or DEDICATED " +
        "(default: ${DEFAULT-VALUE}).")
    ThreadingMode threading = ThreadingMode.SHARED;

    @Option(names = "--workers", description = "Transfer workers (default: ${DEFAULT-VALUE}).")
    int workers = 1;

    @Option(names = "--idle", description = "Idle strategy: backoff, yielding, busy-spin, sleeping " +
        "(default: ${DEFAULT-VALUE}).")
    String idle = "backoff";

    @Option(names = "--rpc-address", description = "This daemon's host:port, the prefix of its segment names " +
        "(default: ${DEFAULT-VALUE}).")
    String rpcAddress = "127.0.0.1:12001";

    @Option(names = "--liveness-timeout-ms", description = "Heartbeat age after which the daemon counts as gone " +
        "(default: ${DEFAULT-VALUE}).")
    long livenessTimeoutMs = 2000;

    @Mixin
    OperationsOptions operations;

    @Override
    public Integer call()
    {
        final DaemonContext context = new DaemonContext()
            .directory(directory)
            .threadingMode(threading)
            .transferWorkers(workers)
            .idleStrategy(idle)
            .rpcAddress(rpcAddress)
            .livenessTimeoutMs(livenessTimeoutMs);
        operations.applyTo(context.operations());
        final CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("TERM"), signal -> stop.countDown());
        Signal.handle(new Signal("INT"), signal -> stop.countDown());
        final XferDaemon daemon;
        try
        {
            daemon = XferDaemon.launch(context);
        }
        catch (final DaemonAlreadyRunningException | IllegalArgumentException ex)
        {
            System.err.println("xferd: " + ex.getMessage());
            return 2;
        }
        try
        {
            stop.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        daemon.close();
        return 0;
    }
}
