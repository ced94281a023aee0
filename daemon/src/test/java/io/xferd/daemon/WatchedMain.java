package io.xferd.daemon;

import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Entry point of every child JVM the system tests start: runs the named main class after arming a watchdog that
 * halts the JVM after a number of seconds, so that a test JVM that died abruptly never leaves a child behind.
 * <p>
 * Arguments: seconds main-class args...
 */
public final class WatchedMain
{
    private WatchedMain()
    {
    }

    public static void main(final String[] args) throws Throwable
    {
        final int seconds = Integer.parseInt(args[0]);
        final Thread watchdog = Thread.ofPlatform().daemon().name("test-child-watchdog").unstarted(() ->
        {
            try
            {
                Thread.sleep(seconds * 1000L);
            }
            catch (final InterruptedException ignore)
            {
                // halt anyway
            }
            System.err.println("test child watchdog: halting after " + seconds + " s");
            Runtime.getRuntime().halt(99);
        });
        watchdog.start();
        final Method main = Class.forName(args[1]).getMethod("main", String[].class);
        main.invoke(null, (Object)Arrays.copyOfRange(args, 2, args.length));
    }
}
