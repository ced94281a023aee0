package io.xferd.daemon.tools.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The training run of the status tool's own AOT cache ({@code daemon/target/xferd-status.aot}), started by
 * {@link AotTraining} as a child JVM while its daemon serves: {@code xferd status} in text and JSON against that
 * daemon and against a directory without one, the way {@link XferdLauncher} runs them. The daemon's cache holds
 * ~5,000 classes, and mapping them cost a status run more than it saved; this one holds only what status loads
 * (the cnc and status files, the text and JSON, the method handles behind them), linked ahead.
 */
public final class StatusAotTraining
{
    private StatusAotTraining()
    {
    }

    /**
     * @param args the directory of a serving daemon, then one without a daemon.
     */
    public static void main(final String[] args) throws IOException
    {
        final PrintStream sink = new PrintStream(OutputStream.nullOutputStream(), false, System.out.charset());
        for (final String directory : args)
        {
            for (final String[] command : List.of(
                new String[]{"status", "--dir", directory}, new String[]{"status", "--json", "--dir", directory}))
            {
                XferdLauncher.runWithoutPicocli(command, sink);
            }
        }
    }

    /**
     * Run the training in a child JVM with the flags bin/xferd gives status (jvm.flags, C1 only) and this JVM's
     * class path, which writes the cache on its exit.
     *
     * @return the child's exit code.
     */
    static int runChild(final Path cache, final Path serving, final Path empty) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JvmFlags.ALL);
        command.addAll(List.of(STATUS_JIT, "-XX:AOTCacheOutput=" + cache, "-Xlog:aot*=off", "-Xlog:cds*=off",
            "-cp", System.getProperty("java.class.path"), StatusAotTraining.class.getName(), serving.toString(),
            empty.toString()));
        final Process child = new ProcessBuilder(command).inheritIO().start();
        return child.waitFor();
    }

    /** What bin/xferd adds for the short-lived tools (an AOT cache is used only under the flags it was made with). */
    static final String STATUS_JIT = "-XX:TieredStopAtLevel=1";
}
