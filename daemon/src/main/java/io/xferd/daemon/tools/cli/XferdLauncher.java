package io.xferd.daemon.tools.cli;

/**
 * {@code bin/xferd}'s main class: a help request the build rendered ahead ({@link UsageText}) is printed without
 * picocli; everything else goes to {@link XferdMain}. Nothing here names a picocli type: the launcher resolves every
 * type in the main class's method signatures before it calls main.
 */
public final class XferdLauncher
{
    private XferdLauncher()
    {
    }

    public static void main(final String[] args)
    {
        if (UsageText.print(args, System.out))
        {
            System.exit(0);
        }
        XferdMain.main(args);
    }
}
