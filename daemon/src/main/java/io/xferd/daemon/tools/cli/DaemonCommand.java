package io.xferd.daemon.tools.cli;

import io.xferd.daemon.XferDaemon;
import io.xferd.daemon.control.DaemonAlreadyRunningException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import sun.misc.Signal;

import java.util.concurrent.CountDownLatch;

/**
 * {@code xferd daemon}: run the per-host daemon in the foreground until SIGTERM or SIGINT, then drain, free
 * everything and exit 0.
 */
@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run the per-host transfer daemon in the foreground (embedded defaults; --config FILE, then " +
        "the options given, override them).")
public final class DaemonCommand implements java.util.concurrent.Callable<Integer>
{
    @Mixin
    DaemonOptions options;

    @Mixin
    OperationsOptions operations;

    @Override
    public Integer call()
    {
        DaemonWarmUp.start(); // the native bindings link on a second core while this thread sets up
        final CountDownLatch stop = new CountDownLatch(1);
        final XferDaemon daemon;
        try
        {
            final io.xferd.daemon.config.DaemonContext context = options.context();
            operations.applyTo(context.operations());
            // once the settings hold, before anything is claimed
            Signal.handle(new Signal("TERM"), signal -> stop.countDown());
            Signal.handle(new Signal("INT"), signal -> stop.countDown());
            daemon = XferDaemon.launch(context);
        }
        catch (final DaemonAlreadyRunningException | IllegalArgumentException | java.io.UncheckedIOException ex)
        {
            System.err.println("xferd: " + ex.getMessage());
            return 2;
        }
        daemon.onFailure(stop::countDown);
        try
        {
            stop.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        daemon.close();
        if (daemon.failure() != null)
        {
            System.err.println("xferd: a daemon thread died: " + daemon.failure());
            return 70; // EX_SOFTWARE: the supervisor restarts the daemon
        }
        return 0;
    }
}
