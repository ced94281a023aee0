package io.xferd.daemon.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An ext4 file system whose device cannot hold what it promises: a 64 MiB image, sparse, on a 3 MiB tmpfs filled up
 * once the file system is mounted, attached to a loop device. Writes land in the page cache and succeed; writing them back (an fdatasync) fails with ENOSPC or
 * EIO from the device: a real failing fdatasync, where device-mapper's {@code error} target is not available.
 * Needs root, loop devices, mkfs.ext4 (skipped without them); everything it made is removed by {@link #close()}.
 */
final class FullLoopFileSystem implements AutoCloseable
{
    private final RootCommands commands;
    private final Path backing;
    private final Path mount;
    private String loop;

    private FullLoopFileSystem(final RootCommands commands)
    {
        this.commands = commands;
        this.backing = commands.root().resolve("backing");
        this.mount = commands.root().resolve("mnt");
    }

    static FullLoopFileSystem create() throws IOException, InterruptedException
    {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount");
        assumeTrue(Files.exists(Path.of("/dev/loop-control")), "no loop devices");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/mkfs.ext4")) || Files.isExecutable(Path.of("/sbin/mkfs.ext4")),
            "no mkfs.ext4");
        final FullLoopFileSystem fs = new FullLoopFileSystem(new RootCommands("xferd-full-fs"));
        try
        {
            Files.createDirectories(fs.backing);
            Files.createDirectories(fs.mount);
            fs.commands.output("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", fs.backing.toString());
            fs.commands.undoLater("umount", fs.backing.toString());
            final Path image = fs.backing.resolve("image");
            fs.commands.output("truncate", "-s", "64M", image.toString());
            fs.commands.output("mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E", "lazy_itable_init=1,nodiscard",
                image.toString());
            fs.loop = fs.commands.output("losetup", "-f", "--show", image.toString()).trim();
            fs.commands.undoLater("losetup", "-d", fs.loop);
            fs.commands.output("mount", "-t", "ext4", "-o", "errors=continue", fs.loop, fs.mount.toString());
            fs.commands.undoLater("umount", fs.mount.toString());
            fs.fillBacking();
            return fs;
        }
        catch (final IOException | RuntimeException ex)
        {
            fs.close();
            throw ex;
        }
    }

    /**
     * Take the backing tmpfs's last free bytes: from now on no block the image has not written yet can be written.
     */
    private void fillBacking() throws IOException
    {
        final byte[] zeros = new byte[64 * 1024];
        try (var out = Files.newOutputStream(backing.resolve("filler")))
        {
            for (int i = 0; i < 1024; i++)
            {
                out.write(zeros);
            }
            throw new IOException("a 3 MiB tmpfs took 64 MiB");
        }
        catch (final IOException ex)
        {
            if (!String.valueOf(ex.getMessage()).contains("No space left"))
            {
                throw ex;
            }
        }
    }

    /**
     * @return where files on the full device go.
     */
    Path mount()
    {
        return mount;
    }

    @Override
    public void close() throws IOException, InterruptedException
    {
        commands.close();
    }
}
