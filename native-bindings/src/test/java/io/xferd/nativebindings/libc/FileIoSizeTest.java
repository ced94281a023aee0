package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FileIo#size} of a regular file: its length, read without moving the file offset, which a descriptor passed
 * by a client shares with the client's own.
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
