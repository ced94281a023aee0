package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Seals and sizes of the files clients register: what the daemon reads before it maps one.
 */
@Timeout(10)
class MemfdSealsTest
{
    @Test
    void aSealedMemfdCannotShrinkAndSaysSo()
    {
        final int fd = Memfd.createSealable("xferd-sealed");
        try
        {
            Memfd.truncate(fd, 64 * 1024);
            assertThat(Memfd.seals(fd)).as("no seal yet").isZero();
            Memfd.addSeals(fd, Memfd.SEAL_SHRINK);

            assertThat(Memfd.seals(fd) & Memfd.SEAL_SHRINK).isEqualTo(Memfd.SEAL_SHRINK);
            assertThatThrownBy(() -> Memfd.truncate(fd, 4096))
                .isInstanceOfSatisfying(NativeException.class, ex -> assertThat(ex.errno()).isEqualTo(Errno.EPERM));
            Memfd.truncate(fd, 128 * 1024); // growing stays allowed
            final FileStatus status = FileStatus.of(fd);
            assertThat(status.size()).isEqualTo(128 * 1024);
            assertThat(status.isRegularFile()).isTrue();
        }
        finally
        {
            Memfd.close(fd);
        }
    }

    @Test
    void aMemfdMadeWithoutAllowSealingCanNeverBeSealed()
    {
        final int fd = Memfd.create("xferd-unsealable");
        try
        {
            assertThat(Memfd.seals(fd)).isEqualTo(Memfd.SEAL_SEAL);
            assertThatThrownBy(() -> Memfd.addSeals(fd, Memfd.SEAL_SHRINK))
                .isInstanceOfSatisfying(NativeException.class, ex -> assertThat(ex.errno()).isEqualTo(Errno.EPERM));
        }
        finally
        {
            Memfd.close(fd);
        }
    }

    @Test
    void aFileOnDiskHasNoSealsButASize(@TempDir final Path directory) throws Exception
    {
        final Path file = directory.resolve("plain");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(12345);
            final int fd = descriptorOf(file);
            assertThat(Memfd.seals(fd)).isEqualTo(Memfd.SEALS_UNSUPPORTED);
            assertThat(FileStatus.of(fd).size()).isEqualTo(12345);
            assertThat(FileStatus.of(fd).isRegularFile()).isTrue();
        }
    }

    @Test
    void aClosedDescriptorIsAnError()
    {
        assertThatThrownBy(() -> FileStatus.of(-1))
            .isInstanceOfSatisfying(NativeException.class, ex -> assertThat(ex.errno()).isEqualTo(Errno.EBADF));
    }

    /**
     * The number of the descriptor this process has open on {@code file}, found through /proc/self/fd.
     */
    private static int descriptorOf(final Path file) throws IOException
    {
        try (var links = Files.list(Path.of("/proc/self/fd")))
        {
            for (final Path link : (Iterable<Path>)links::iterator)
            {
                try
                {
                    if (Files.readSymbolicLink(link).equals(file.toRealPath()))
                    {
                        return Integer.parseInt(link.getFileName().toString());
                    }
                }
                catch (final IOException ex)
                {
                    // the descriptor of the listing itself, closed by now
                }
            }
        }
        throw new IllegalStateException("no descriptor open on " + file);
    }
}
