package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link FileIo#size} of a regular file or a block device: its length, read without moving the file offset, which a
 * descriptor passed by a client shares with the client's own.
 */
@Timeout(10)
class FileIoSizeTest
{
    @Test
    void shouldTellARegularFilesSizeWithoutMovingItsOffset() throws IOException
    {
        final Path file = Files.createTempFile("xferd-fileio-", ".bin");
        try (RandomAccessFile open = new RandomAccessFile(file.toFile(), "rw"))
        {
            open.write(new byte[12_345]);
            final int fd = FileIo.open(file.toString(), FileIo.O_RDONLY, 0);
            try
            {
                final long before = position(fd);
                assertThat(FileIo.size(fd)).isEqualTo(12_345);
                assertThat(position(fd)).as("the offset of the daemon's descriptor").isEqualTo(before);
            }
            finally
            {
                FileIo.close(fd);
            }
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldTellABlockDevicesCapacityWithoutMovingItsOffset() throws Exception
    {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for a loop device");
        assumeTrue(Files.exists(Path.of("/dev/loop-control")), "no loop devices");
        final Path image = Files.createTempFile("xferd-fileio-", ".img");
        String loop = null;
        try
        {
            try (RandomAccessFile open = new RandomAccessFile(image.toFile(), "rw"))
            {
                open.setLength(3 << 20);
            }
            final java.lang.Process losetup = new ProcessBuilder("losetup", "-f", "--show", image.toString())
                .redirectErrorStream(true).start();
            final String output = new String(losetup.getInputStream().readAllBytes()).trim();
            assumeTrue(losetup.waitFor() == 0, "losetup: " + output);
            loop = output;
            final int fd = FileIo.open(loop, FileIo.O_RDONLY, 0);
            try
            {
                assertThat(FileIo.size(fd)).isEqualTo(3 << 20);
                assertThat(position(fd)).as("the offset of the daemon's descriptor").isZero();
            }
            finally
            {
                FileIo.close(fd);
            }
        }
        finally
        {
            if (loop != null)
            {
                new ProcessBuilder("losetup", "-d", loop).inheritIO().start().waitFor();
            }
            Files.deleteIfExists(image);
        }
    }

    @Test
    void shouldRefuseACharacterDeviceWithoutAskingItsDriver()
    {
        final int fd = FileIo.open("/dev/null", FileIo.O_RDONLY, 0);
        try
        {
            assertThat(FileIo.size(fd)).isEqualTo(-FileIo.ENOTTY);
        }
        finally
        {
            FileIo.close(fd);
        }
    }

    /** The descriptor's file offset, as the kernel reports it. */
    private static long position(final int fd) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd)))
        {
            if (line.startsWith("pos:"))
            {
                return Long.parseLong(line.substring(4).trim());
            }
        }
        throw new IOException("no pos: in /proc/self/fdinfo/" + fd);
    }
}
