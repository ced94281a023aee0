package io.xferd.daemon;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A daemon process for {@link DataPlaneDoorbellTest}: {@code DIR SLEEP_MS} serves DIR with its intake thread sleeping
 * up to SLEEP_MS at a time once quiet, prints {@code SERVING}, and stops at {@code EXIT} or the end of its input.
 */
public final class SleepyDaemonMain
{
    private SleepyDaemonMain()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final XferDaemon daemon = XferDaemon.launch(SystemTests.daemonContext(Path.of(args[0]))
            .dataPlaneSleepNs(Long.parseLong(args[1]) * 1_000_000L));
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
