package io.xferd.daemon.tools.cli;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts another JVM on this one's class path and native-access flags: the demo's producer and consumer are
 * separate processes, as inference workers would be.
 */
public final class JavaProcesses
{
    private JavaProcesses()
    {
    }

    public static ProcessBuilder builder(final Class<?> mainClass, final List<String> args)
    {
        final List<String> command = new ArrayList<>();
        command.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        // FFM, Agrona 2 (jdk.internal.misc.Unsafe) and, for a daemon child, Chronicle
        command.addAll(JvmFlags.ALL);
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        return new ProcessBuilder(command);
    }

    public static Process start(final Class<?> mainClass, final List<String> args) throws IOException
    {
        return builder(mainClass, args).redirectErrorStream(true).start();
    }
}
