package io.xferd.daemon.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A scratch directory and the system commands run to build devices in it (loop devices, mounts, device-mapper
 * tables), each with the command that undoes it: {@link #close()} undoes them newest first, then deletes the
 * directory. What the storage tests that need root share.
 */
final class RootCommands implements AutoCloseable
{
    private final Path root;
    private final List<String[]> undo = new ArrayList<>();

    RootCommands(final String prefix) throws IOException
    {
        this.root = Files.createTempDirectory(prefix);
    }

    Path root()
    {
        return root;
    }

    /**
     * @return what the command printed.
     * @throws IOException when it failed or ran over a minute (with what it printed).
     */
    String output(final String... command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    /**
     * Run {@code command} by {@link #close()} (after those registered later).
     */
    void undoLater(final String... command)
    {
        undo.add(command);
    }

    @Override
    public void close() throws IOException, InterruptedException
    {
        for (int i = undo.size() - 1; i >= 0; i--)
        {
            try
            {
                output(undo.get(i));
            }
            catch (final IOException ex)
            {
                System.err.println("cleanup: " + ex.getMessage());
            }
        }
        undo.clear();
        try (var paths = Files.walk(root))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}
