package io.xferd.daemon;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two "hosts" for system tests: network namespaces {@code xf-<pid>-<n>a} and {@code ...b} joined by a veth pair,
 * {@link #addressA()} = 10.213.k.1/24 in A and {@link #addressB()} = 10.213.k.2/24 in B (k from the pid; the
 * addresses exist only inside the two namespaces, so concurrent runs cannot collide). Processes run in a
 * namespace through {@code ip netns exec}; {@link #linkDown()} / {@link #linkUp()} cut and restore the wire,
 * {@link #rateLimit} shapes it with tc. {@link #close()} kills every process started here and deletes both
 * namespaces, which removes the veth pair.
 * <p>
 * Needs root and iproute2: {@link #assumeAvailable()} skips a test with the reason where they are missing,
 * except in CI (environment variable CI set), where it fails.
 */
final class NetworkNamespaces implements AutoCloseable
{
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final long COMMAND_TIMEOUT_S = 20;
    private static String unavailableReason;
    private static boolean probed;

    private final String namespaceA;
    private final String namespaceB;
    private final String vethA;
    private final String vethB;
    private final String addressA;
    private final String addressB;
    private final List<Process> processes = new ArrayList<>();
    private final long subnet;
    private String vethA2;
    private String vethB2;
    private boolean closed;

    private NetworkNamespaces()
    {
        final long pid = ProcessHandle.current().pid();
        final int instance = INSTANCES.incrementAndGet();
        namespaceA = "xf-" + pid + "-" + instance + "a";
        namespaceB = "xf-" + pid + "-" + instance + "b";
        vethA = "xf" + pid + "-" + instance + "a"; // interface names stay under 16 characters
        vethB = "xf" + pid + "-" + instance + "b";
        final long k = (pid * 7 + instance) % 250 + 1;
        subnet = k;
        addressA = "10.213." + k + ".1";
        addressB = "10.213." + k + ".2";
    }

    /**
     * Create both namespaces and the veth pair between them, addresses assigned and every link (lo too) up.
     */
    static NetworkNamespaces create()
    {
        final NetworkNamespaces namespaces = new NetworkNamespaces();
        try
        {
            namespaces.setUp();
            return namespaces;
        }
        catch (final RuntimeException ex)
        {
            namespaces.close();
            throw ex;
        }
    }

    private void setUp()
    {
        run("ip", "netns", "add", namespaceA);
        run("ip", "netns", "add", namespaceB);
        run("ip", "link", "add", vethA, "netns", namespaceA, "type", "veth", "peer", "name", vethB,
            "netns", namespaceB);
        run("ip", "-n", namespaceA, "addr", "add", addressA + "/24", "dev", vethA);
        run("ip", "-n", namespaceB, "addr", "add", addressB + "/24", "dev", vethB);
        for (final String[] link : new String[][]{{namespaceA, "lo"}, {namespaceB, "lo"}, {namespaceA, vethA},
            {namespaceB, vethB}})
        {
            run("ip", "-n", link[0], "link", "set", link[1], "up");
        }
    }

    /**
     * A second wire between the two hosts (a second NIC on each), on its own subnet 10.214.k.0/24, link up.
     */
    void addSecondLink()
    {
        vethA2 = vethA + "2";
        vethB2 = vethB + "2";
        run("ip", "link", "add", vethA2, "netns", namespaceA, "type", "veth", "peer", "name", vethB2,
            "netns", namespaceB);
        run("ip", "-n", namespaceA, "addr", "add", addressA2() + "/24", "dev", vethA2);
        run("ip", "-n", namespaceB, "addr", "add", addressB2() + "/24", "dev", vethB2);
        run("ip", "-n", namespaceA, "link", "set", vethA2, "up");
        run("ip", "-n", namespaceB, "link", "set", vethB2, "up");
    }

    String vethA()
    {
        return vethA;
    }

    String vethB()
    {
        return vethB;
    }

    String vethB2()
    {
        return vethB2;
    }

    String vethA2()
    {
        return vethA2;
    }

    String addressA2()
    {
        return "10.214." + subnet + ".1";
    }

    String addressB2()
    {
        return "10.214." + subnet + ".2";
    }

    /** Take one of host A's NICs down (its peer on B loses carrier). */
    void linkDown(final String nicOfA)
    {
        run("ip", "-n", namespaceA, "link", "set", nicOfA, "down");
    }

    void linkUp(final String nicOfA)
    {
        run("ip", "-n", namespaceA, "link", "set", nicOfA, "up");
    }

    /**
     * @return true when this process may create network namespaces (root, iproute2, a kernel that allows it).
     */
    static synchronized boolean available()
    {
        if (!probed)
        {
            probed = true;
            unavailableReason = probe();
        }
        return unavailableReason == null;
    }

    /**
     * Skip the calling test when namespaces are not available; in CI, fail it instead.
     */
    static void assumeAvailable()
    {
        if (!available())
        {
            if (System.getenv("CI") != null)
            {
                throw new AssertionError("CI must be able to create network namespaces: " + unavailableReason);
            }
            Assumptions.assumeTrue(false, "network namespaces not available: " + unavailableReason);
        }
    }

    private static String probe()
    {
        try
        {
            final Result uid = execute(List.of("id", "-u"));
            if (uid.exitCode != 0 || !"0".equals(uid.output.trim()))
            {
                return "not root (uid " + uid.output.trim() + ")";
            }
            final String probe = "xf-probe-" + ProcessHandle.current().pid();
            final Result add = execute(List.of("ip", "netns", "add", probe));
            if (add.exitCode != 0)
            {
                return "'ip netns add' failed: " + add.output.trim();
            }
            execute(List.of("ip", "netns", "del", probe));
            return null;
        }
        catch (final UncheckedIOException ex)
        {
            return "cannot run iproute2's 'ip': " + ex.getCause().getMessage();
        }
    }

    String namespaceA()
    {
        return namespaceA;
    }

    String namespaceB()
    {
        return namespaceB;
    }

    /** Address of A's end of the wire (no prefix length). */
    String addressA()
    {
        return addressA;
    }

    /** Address of B's end of the wire (no prefix length). */
    String addressB()
    {
        return addressB;
    }

    /**
     * Make {@code builder} run its command inside {@code namespace} ({@code ip netns exec NS ...}).
     */
    ProcessBuilder exec(final String namespace, final ProcessBuilder builder)
    {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
        command.addAll(builder.command());
        return builder.command(command);
    }

    /**
     * Start {@code builder}'s command inside {@code namespace}; {@link #close()} kills it.
     */
    synchronized Process start(final String namespace, final ProcessBuilder builder)
    {
        if (closed)
        {
            throw new IllegalStateException("namespaces are closed");
        }
        try
        {
            final Process process = exec(namespace, builder).start();
            processes.add(process);
            return process;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** Cut the wire: A's end of the veth pair goes down (B's loses its carrier). */
    void linkDown()
    {
        run("ip", "-n", namespaceA, "link", "set", vethA, "down");
    }

    void linkUp()
    {
        run("ip", "-n", namespaceA, "link", "set", vethA, "up");
    }

    /**
     * Limit both directions to {@code mbit} Mbit/s (token bucket filter on each end).
     */
    void rateLimit(final int mbit)
    {
        final List<String[]> ends = new ArrayList<>(List.of(new String[]{namespaceA, vethA},
            new String[]{namespaceB, vethB}));
        if (vethA2 != null)
        {
            ends.add(new String[]{namespaceA, vethA2});
            ends.add(new String[]{namespaceB, vethB2});
        }
        for (final String[] end : ends)
        {
            run("ip", "netns", "exec", end[0], "tc", "qdisc", "replace", "dev", end[1], "root", "tbf",
                "rate", mbit + "mbit", "burst", "256kb", "latency", "50ms");
        }
    }

    /**
     * @return the names {@code ip netns list} shows.
     */
    static List<String> listNamespaces()
    {
        final Result result = execute(List.of("ip", "netns", "list"));
        final List<String> names = new ArrayList<>();
        for (final String line : result.output.split("\n"))
        {
            if (!line.isBlank())
            {
                names.add(line.trim().split(" ")[0]);
            }
        }
        return names;
    }

    /**
     * Kill every process started here (and its descendants), then delete both namespaces; idempotent.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final Process process : processes)
        {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        for (final Process process : processes)
        {
            try
            {
                process.waitFor(10, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        execute(List.of("ip", "netns", "del", namespaceA));
        execute(List.of("ip", "netns", "del", namespaceB));
    }

    private static void run(final String... command)
    {
        final Result result = execute(List.of(command));
        if (result.exitCode != 0)
        {
            throw new IllegalStateException(String.join(" ", command) + " failed (exit " + result.exitCode + "): " +
                result.output.trim());
        }
    }

    private record Result(int exitCode, String output)
    {
    }

    private static Result execute(final List<String> command)
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            if (!process.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return new Result(-1, String.join(" ", command) + " did not end within " + COMMAND_TIMEOUT_S + " s");
            }
            return new Result(process.exitValue(),
                new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }
}
