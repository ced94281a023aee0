package io.xferd.daemon;

import io.xferd.daemon.config.DaemonContext;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A daemon process for {@link DataPlaneDoorbellTest} and {@link CompletionDoorbellTest}: {@code DIR SLEEP_MS
 * [LIVENESS_MS]} serves DIR with its intake thread sleeping up to SLEEP_MS at a time once quiet (and clients counting
 * it gone after LIVENESS_MS without a heartbeat: a test that stops it with SIGSTOP, or a loaded machine, needs more
 * than the default 2 s), prints {@code SERVING}, and stops at {@code EXIT} or the end of its input.
 */
public final class SleepyDaemonMain
{
    private SleepyDaemonMain()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final DaemonContext context = SystemTests.daemonContext(Path.of(args[0]))
            .dataPlaneSleepNs(Long.parseLong(args[1]) * 1_000_000L);
        if (args.length > 2)
        {
            context.livenessTimeoutMs(Long.parseLong(args[2]));
        }
        final XferDaemon daemon = XferDaemon.launch(context);
        try (BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
        {
            System.out.println("SERVING");
            System.out.flush();
            String line;
            while ((line = input.readLine()) != null && !"EXIT".equals(line))
            {
                // wait for the test to finish
            }
        }
        finally
        {
            daemon.close();
        }
        System.out.println("STOPPED");
        System.exit(0);
    }
}
