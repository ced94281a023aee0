package io.xferd.perf;

import io.xferd.daemon.tools.cli.JvmFlags;

import java.util.ArrayList;
import java.util.List;

/**
 * The benchmarks jar's entry point: JMH's own {@code Main}, with every fork started on the JVM flags of
 * {@code jvm.flags} ({@link JvmFlags}), prepended to any {@code -jvmArgsPrepend} given on the command line.
 * An annotation cannot read a file, so the list reaches the forks here rather than in {@link ForkedWithXferdFlags}.
 */
public final class BenchmarkMain
{
    private static final String PREPEND = "-jvmArgsPrepend";

    private BenchmarkMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        org.openjdk.jmh.Main.main(withXferdFlags(args, JvmFlags.ALL));
    }

    static String[] withXferdFlags(final String[] args, final List<String> flags)
    {
        final List<String> result = new ArrayList<>();
        final StringBuilder prepend = new StringBuilder(String.join(" ", flags));
        for (int i = 0; i < args.length; i++)
        {
            if (PREPEND.equals(args[i]) && i + 1 < args.length)
            {
                prepend.append(' ').append(args[++i]);
            }
            else
            {
                result.add(args[i]);
            }
        }
        result.add(PREPEND);
        result.add(prepend.toString());
        return result.toArray(String[]::new);
    }
}
