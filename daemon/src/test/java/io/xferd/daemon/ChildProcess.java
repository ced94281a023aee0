package io.xferd.daemon;

import io.xferd.daemon.tools.cli.JavaProcesses;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM of a system test: its merged output kept line by line (and shown when a wait fails), lines
 * written to its stdin, bounded waits for a line or for its exit, and {@link #close()} that kills it and every
 * process it started.
 */
final class ChildProcess implements AutoCloseable
{
    private static final int WATCHDOG_SECONDS = 180;

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;

    private ChildProcess(final String name, final Process process)
    {
        this.name = name;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.reader = Thread.ofPlatform().daemon().name("child-output-" + name).start(this::readOutput);
    }

    /**
     * Start {@code mainClass} in a child JVM on this JVM's class path.
     */
    static ChildProcess start(final String name, final Class<?> mainClass, final String... args)
    {
        return start(name, java.util.Map.of(), mainClass, args);
    }

    /**
     * Start {@code mainClass} in a child JVM on this JVM's class path, with extra environment variables.
     */
    static ChildProcess start(
        final String name, final java.util.Map<String, String> environment, final Class<?> mainClass,
        final String... args)
    {
        final List<String> watched = new ArrayList<>();
        watched.add(Integer.toString(WATCHDOG_SECONDS));
        watched.add(mainClass.getName());
        watched.addAll(List.of(args));
        try
        {
            final ProcessBuilder builder = JavaProcesses.builder(WatchedMain.class, watched).redirectErrorStream(true);
            builder.environment().putAll(environment);
            return new ChildProcess(name, builder.start());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Start {@code mainClass} in a child JVM whose umask is {@code umask} (octal text, e.g. "000").
     */
    static ChildProcess startWithUmask(
        final String name, final String umask, final Class<?> mainClass, final String... args)
    {
        final List<String> watched = new ArrayList<>();
        watched.add(Integer.toString(WATCHDOG_SECONDS));
        watched.add(mainClass.getName());
        watched.addAll(List.of(args));
        try
        {
            final ProcessBuilder builder = JavaProcesses.builder(WatchedMain.class, watched).redirectErrorStream(true);
            final List<String> command = new ArrayList<>(List.of("sh", "-c", "umask " + umask + "; exec \"$@\"", "sh"));
            command.addAll(builder.command());
            builder.command(command);
            return new ChildProcess(name, builder.start());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Start {@code mainClass} in a child JVM inside a network namespace (another "host").
     */
    static ChildProcess startIn(
        final NetworkNamespaces namespaces, final String namespace, final String name, final Class<?> mainClass,
        final String... args)
    {
        final List<String> watched = new ArrayList<>();
        watched.add(Integer.toString(WATCHDOG_SECONDS));
        watched.add(mainClass.getName());
        watched.addAll(List.of(args));
        return new ChildProcess(name, namespaces.start(namespace,
            JavaProcesses.builder(WatchedMain.class, watched).redirectErrorStream(true)));
    }

    /**
     * Start any command (a launcher script, say); stderr merged into the output.
     */
    static ChildProcess startCommand(final String name, final ProcessBuilder builder)
    {
        try
        {
            return new ChildProcess(name, builder.redirectErrorStream(true).start());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private void readOutput()
    {
        try (BufferedReader out = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null)
            {
                synchronized (lines)
                {
                    lines.add(line);
                    lines.notifyAll();
                }
            }
        }
        catch (final IOException ignore)
        {
            // the process is gone
        }
    }

    /**
     * @return the first output line that contains {@code text}, waiting for it (bounded).
     * @throws AssertionError with the output so far when it does not come or the process ends first.
     */
    String awaitLine(final String text, final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lines)
        {
            int seen = 0;
            while (true)
            {
                for (; seen < lines.size(); seen++)
                {
                    if (lines.get(seen).contains(text))
                    {
                        return lines.get(seen);
                    }
                }
                final long waitMs = (deadline - System.nanoTime()) / 1_000_000L;
                if (waitMs <= 0 || (!process.isAlive() && !reader.isAlive()))
                {
                    throw new AssertionError(name + ": no line containing '" + text + "' within " +
                        timeout.toMillis() + " ms (alive " + process.isAlive() + "); output:\n" + output() +
                        threadDumps());
                }
                try
                {
                    lines.wait(Math.min(waitMs, 100));
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted", ex);
                }
            }
        }
    }

    void sendLine(final String line)
    {
        try
        {
            stdin.write(line + "\n");
            stdin.flush();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(name + " does not take input any more", ex);
        }
    }

    /**
     * @return the exit code, once the process ended (bounded wait) and its output was read to the end.
     */
    int awaitExit(final Duration timeout)
    {
        try
        {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
            {
                throw new AssertionError(name + " still running after " + timeout.toMillis() + " ms; output:\n" +
                    output());
            }
            reader.join(timeout.toMillis());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", ex);
        }
        return process.exitValue();
    }

    /**
     * The threads of every live JVM of this child (the process itself or, under {@code ip netns exec} or a
     * shell, its descendants), so that a wait that ran out says where the child was, not only what it printed.
     */
    private String threadDumps()
    {
        final java.nio.file.Path jcmd = ProcessHandle.current().info().command()
            .map(launcher -> java.nio.file.Path.of(launcher).resolveSibling("jcmd")).orElse(null);
        if (jcmd == null || !java.nio.file.Files.isExecutable(jcmd))
        {
            return "";
        }
        final StringBuilder dumps = new StringBuilder();
        java.util.stream.Stream.concat(java.util.stream.Stream.of(process.toHandle()), process.descendants())
            .filter(ProcessHandle::isAlive)
            .filter(handle -> handle.info().command().map(command -> command.endsWith("/java")).orElse(false))
            .forEach(handle ->
            {
                try
                {
                    final Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(handle.pid()),
                        "Thread.print").redirectErrorStream(true).start();
                    final byte[] text = dump.getInputStream().readNBytes(1 << 20);
                    dump.waitFor(30, TimeUnit.SECONDS);
                    dump.destroyForcibly();
                    dumps.append("\n--- threads of pid ").append(handle.pid()).append(" ---\n")
                        .append(new String(text, StandardCharsets.UTF_8));
                }
                catch (final IOException ex)
                {
                    dumps.append("\n(no thread dump of pid ").append(handle.pid()).append(": ").append(ex).append(')');
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            });
        return dumps.toString();
    }

    String output()
    {
        synchronized (lines)
        {
            return String.join("\n", lines);
        }
    }

    long pid()
    {
        return process.pid();
    }

    boolean isAlive()
    {
        return process.isAlive();
    }

    /**
     * kill -9, and wait until the process is gone.
     */
    void kill()
    {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(10));
    }

    /**
     * SIGTERM.
     */
    void terminate()
    {
        process.destroy();
    }

    /**
     * Kill the process and everything it started; idempotent.
     */
    @Override
    public void close()
    {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try
        {
            process.waitFor(10, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
