import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;

/**
 * PassCostProbe's modes for two builds of the daemon in ONE JVM, alternated ABBA (run by pass-cost-ab.sh): each
 * build's classes and test classes in a class loader of their own, so both sides see the same load, the same
 * minutes and the same caches; a loaded 2-vCPU VM swings one JVM's figures by +-30 % from the next.
 * <p>
 * Arguments: the two checkouts (A, B), the pairs of ABBA rounds, then modes (batch, batch-scattered,
 * batch+journal, requests, ...). Prints PassCostProbe's lines, each after a "SIDE name mode" line.
 */
public final class PassCostAB
{
    public static void main(final String[] args) throws Exception
    {
        final String[] roots = {args[0], args[1]};
        final Method[] probes = new Method[2];
        for (int side = 0; side < 2; side++)
        {
            final URLClassLoader loader = new URLClassLoader(new URL[] {
                new File(roots[side], "daemon/target/classes/").toURI().toURL(),
                new File(roots[side], "daemon/target/test-classes/").toURI().toURL()},
                PassCostAB.class.getClassLoader());
            final Class<?> probe = loader.loadClass("io.xferd.daemon.pipeline.PassCostProbe");
            probes[side] = probe.getDeclaredMethod("probe", boolean.class, boolean.class, boolean.class);
            probes[side].setAccessible(true);
        }
        final int pairs = Integer.parseInt(args[2]);
        for (int pair = 0; pair < pairs; pair++)
        {
            for (int turn = 0; turn < 2; turn++)
            {
                final int side = pair % 2 == 0 ? turn : 1 - turn; // ABBA: neither side always goes first
                for (int i = 3; i < args.length; i++)
                {
                    final String mode = args[i];
                    System.out.println("SIDE " + (side == 0 ? "A" : "B") + " " + mode);
                    probes[side].invoke(null, mode.startsWith("batch"), mode.contains("+journal"),
                        mode.contains("scattered"));
                }
            }
        }
    }
}
