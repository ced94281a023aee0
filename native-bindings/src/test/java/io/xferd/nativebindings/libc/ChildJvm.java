package io.xferd.nativebindings.libc;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts a test-source main class in a child JVM with this test's class path and native access enabled.
 */
final class ChildJvm
{
    private ChildJvm()
    {
    }

    static ProcessBuilder builder(final Class<?> mainClass, final String... args)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-Xmx64m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-Xshare:auto");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        return new ProcessBuilder(command);
    }

    static java.lang.Process startLoggingTo(final Path log, final Class<?> mainClass, final String... args)
        throws IOException
    {
        return builder(mainClass, args).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    static void destroy(final java.lang.Process process) throws InterruptedException
    {
        if (process != null && process.isAlive())
        {
            process.destroyForcibly();
            process.waitFor();
        }
    }

    /**
     * Kills the child JVM after {@code seconds} whatever it is doing, so that a broken parent never leaves it behind.
     */
    static void exitAfter(final int seconds)
    {
        final Thread watchdog = Thread.ofPlatform().daemon().name("child-watchdog").unstarted(() ->
        {
            try
            {
                Thread.sleep(seconds * 1000L);
            }
            catch (final InterruptedException ignore)
            {
                // exit anyway
            }
            System.err.println("child watchdog: giving up after " + seconds + "s");
            Runtime.getRuntime().halt(99);
        });
        watchdog.start();
    }
}
