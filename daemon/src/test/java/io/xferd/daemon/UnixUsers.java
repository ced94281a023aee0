package io.xferd.daemon;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the tests that play "another local user" share: running a command as a user they created, and running the
 * administration commands (useradd, userdel, chgrp...) that set it up.
 */
final class UnixUsers
{
    private UnixUsers()
    {
    }

    /**
     * setpriv and env exec the command (runuser would fork it), in a plain environment: destroying the Process
     * ends the user's process.
     */
    static List<String> asUser(final String user, final String... command)
    {
        final List<String> line = new ArrayList<>(
            List.of("setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--",
                "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin"));
        line.addAll(List.of(command));
        return line;
    }

    /**
     * Run a command to its end (at most 30 s).
     *
     * @return its output.
     * @throws IOException when it fails, with its output.
     */
    static String run(final List<String> command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            throw new IOException(command + " failed: " + output);
        }
        return output;
    }
}
