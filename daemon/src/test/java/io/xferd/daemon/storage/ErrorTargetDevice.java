package io.xferd.daemon.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A block device with a failing region in the middle: device-mapper's {@code linear} target over a loop device for
 * the first and last parts, its {@code error} target (every read and write fails with EIO) between them. Needs
 * root, loop devices, {@code dmsetup} and the kernel's device-mapper (skipped, with the reason, without them: a
 * kernel without {@code dm-mod}, as on the development VM, answers {@code dmsetup version} with "Failure to
 * communicate with kernel device-mapper driver"). Everything it made is removed by {@link #close()}.
 */
final class ErrorTargetDevice implements AutoCloseable
{
    static final int SECTOR = 512;

    private final RootCommands commands;
    private Path device;

    private ErrorTargetDevice(final RootCommands commands)
    {
        this.commands = commands;
    }

    /**
     * @param content the bytes of the device (its size: a multiple of 1 MiB), failing from {@code errorStart} for
     *                {@code errorLength} bytes (both multiples of 4096).
     */
    static ErrorTargetDevice create(final byte[] content, final long errorStart, final long errorLength)
        throws IOException, InterruptedException
    {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for loop and device-mapper devices");
        assumeTrue(Files.exists(Path.of("/dev/loop-control")), "no loop devices");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/dmsetup")) || Files.isExecutable(Path.of("/sbin/dmsetup")),
            "no dmsetup (Debian package dmsetup)");
        final String version = probe("dmsetup", "version");
        assumeTrue(version == null, () -> "no device-mapper in this kernel (modprobe dm-mod): " + version);
        final String targets = probe("dmsetup", "targets");
        assumeTrue(targets == null, () -> "dmsetup targets failed: " + targets);
        final ErrorTargetDevice made = new ErrorTargetDevice(new RootCommands("xferd-dm-error"));
        try
        {
            final Path backing = made.commands.root().resolve("backing");
            Files.write(backing, content);
            final String loop = made.commands.output("losetup", "-f", "--show", backing.toString()).trim();
            made.commands.undoLater("losetup", "-d", loop);
            final String name = "xferd-error-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
            final long before = errorStart / SECTOR;
            final long failing = errorLength / SECTOR;
            final long after = content.length / SECTOR - before - failing;
            final String table = "0 " + before + " linear " + loop + " 0\n" +
                before + " " + failing + " error\n" +
                (before + failing) + " " + after + " linear " + loop + " " + (before + failing) + "\n";
            made.commands.output("dmsetup", "create", name, "--noudevsync", "--table", table);
            made.commands.undoLater("dmsetup", "remove", "--noudevsync", "--retry", name);
            made.commands.output("dmsetup", "mknodes", name); // where no udev makes the node
            made.device = Path.of("/dev/mapper", name);
            assumeTrue(Files.exists(made.device), "device-mapper made no node " + made.device);
            return made;
        }
        catch (final IOException | InterruptedException | RuntimeException ex)
        {
            made.close();
            throw ex;
        }
    }

    Path device()
    {
        return device;
    }

    /**
     * @return null when the command succeeded, else what it printed.
     */
    private static String probe(final String... command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            return "timed out";
        }
        return process.exitValue() == 0 ? null : out.trim();
    }

    @Override
    public void close() throws IOException, InterruptedException
    {
        commands.close();
    }
}
