package io.xferd.daemon.tools.cli;

import java.util.List;

/**
 * Links ahead, on a thread of its own, what a daemon's start needs later on its main thread: the native bindings
 * whose static initialisers link FFM downcalls (each spins method-handle and stub classes at run time, which the
 * AOT cache cannot hold: ~0.5 s of CPU on the path to serving, measured with per-phase marks), and the RDMA probe.
 * The main thread meanwhile sets up logging and the context; where it gets to a class first, it initialises it
 * itself (or waits for this thread's initialisation to finish), so the order of the two never matters and the
 * result is the same. A failure here is ignored: the main thread meets it again and reports it (a static
 * initialiser's failure as a NoClassDefFoundError whose cause is the original error).
 */
final class DaemonWarmUp
{
    /**
     * In the order the start needs them (XferDaemon's constructor: the RDMA probe, the cnc file and process, the
     * storage stage, the conductor's socket and poller, the doorbells).
     */
    static final List<String> CLASSES = List.of(
        "io.xferd.nativebindings.verbs.Verbs",
        "io.xferd.nativebindings.libc.Process",
        "io.xferd.nativebindings.libc.EventFd",
        "io.xferd.nativebindings.libc.CallScratch",
        "io.xferd.nativebindings.libc.Sockets",
        "io.xferd.nativebindings.libc.SocketAddressUnix",
        "io.xferd.nativebindings.libc.FileDescriptors",
        "io.xferd.nativebindings.libc.UnixSocket",
        "io.xferd.daemon.files.FileModes",
        "io.xferd.nativebindings.libc.Poller",
        "io.xferd.nativebindings.libc.Futex");

    private DaemonWarmUp()
    {
    }

    /**
     * Start the warm-up thread (a daemon thread: it never holds the JVM up).
     */
    static Thread start()
    {
        final Thread thread = new Thread(DaemonWarmUp::run, "xferd-warm-up");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    static void run()
    {
        final ClassLoader loader = DaemonWarmUp.class.getClassLoader();
        for (final String name : CLASSES)
        {
            try
            {
                Class.forName(name, true, loader);
                if (name.endsWith(".Verbs"))
                {
                    io.xferd.nativebindings.verbs.Verbs.availability(); // the probe, cached for the start's own call
                }
            }
            catch (final Throwable ignored)
            {
                // the main thread meets it where it needs the class, and reports it
            }
        }
    }
}
