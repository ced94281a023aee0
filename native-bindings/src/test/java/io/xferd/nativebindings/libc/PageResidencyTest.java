package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a peer connection asks of a tmpfs file's mapping before it reads or writes through it: which pages are holes
 * ({@link MappedMemory#allResident}), and filling holes without growing the file ({@link FileIo#allocateKeepingSize}).
 */
class PageResidencyTest
{
    private static final long PAGE = 4096;
    private static final long SIZE = 64 * PAGE;

    @Test
    @Timeout(10)
    void shouldTellHolesFromPagesAndFillHolesWithoutGrowingTheFile()
    {
        final int fd = Memfd.create("xferd-residency");
        MemorySegment mapping = null;
        try (Arena arena = Arena.ofConfined())
        {
            Memfd.truncate(fd, SIZE); // all holes
            mapping = MappedMemory.mapShared(fd, 0, SIZE);
            final long base = mapping.address();
            final MemorySegment onePage = arena.allocate(1); // chunks of one page: the loop over chunks is exercised
            final MemorySegment manyPages = arena.allocate(256);

            assertThat(MappedMemory.allResident(base, SIZE, manyPages)).isFalse();
            mapping.set(ValueLayout.JAVA_BYTE, 0, (byte)1);
            mapping.set(ValueLayout.JAVA_BYTE, PAGE + 5, (byte)1);
            assertThat(MappedMemory.allResident(base, 2 * PAGE, manyPages)).isTrue();
            assertThat(MappedMemory.allResident(base + 100, 2 * PAGE - 100, onePage)).as("unaligned start").isTrue();
            assertThat(MappedMemory.allResident(base, 2 * PAGE + 1, onePage)).as("one byte into a hole").isFalse();
            assertThat(MappedMemory.allResident(base + 3 * PAGE, PAGE, manyPages)).isFalse();

            assertThat(FileIo.allocateKeepingSize(fd, 3 * PAGE, 2 * PAGE)).isZero();
            assertThat(FileIo.size(fd)).isEqualTo(SIZE);
            // allocated but never written pages read as zeros and still count as holes; written, they are pages
            mapping.set(ValueLayout.JAVA_BYTE, 3 * PAGE, (byte)1);
            mapping.set(ValueLayout.JAVA_BYTE, 4 * PAGE, (byte)1);
            assertThat(MappedMemory.allResident(base + 3 * PAGE, 2 * PAGE, onePage)).isTrue();
            assertThat(MappedMemory.allResident(base + 3 * PAGE, 3 * PAGE, onePage)).isFalse();
            assertThat(FileIo.allocateKeepingSize(-1, 0, PAGE)).as("-EBADF").isEqualTo(-9);
        }
        finally
        {
            if (mapping != null)
            {
                MappedMemory.unmap(mapping);
            }
            Memfd.close(fd);
        }
    }

    @Test
    @Timeout(10)
    void shouldMapADescriptorReadOnly()
    {
        final int fd = Memfd.create("xferd-read-only");
        MemorySegment writable = null;
        MemorySegment readOnly = null;
        try
        {
            Memfd.truncate(fd, SIZE);
            writable = MappedMemory.mapShared(fd, 0, SIZE);
            writable.set(ValueLayout.JAVA_BYTE, PAGE + 7, (byte)42);
            readOnly = MappedMemory.mapSharedReadOnly(fd, PAGE, PAGE);
            assertThat(readOnly.get(ValueLayout.JAVA_BYTE, 7)).isEqualTo((byte)42);
        }
        finally
        {
            if (readOnly != null)
            {
                MappedMemory.unmap(readOnly);
            }
            if (writable != null)
            {
                MappedMemory.unmap(writable);
            }
            Memfd.close(fd);
        }
    }
}
