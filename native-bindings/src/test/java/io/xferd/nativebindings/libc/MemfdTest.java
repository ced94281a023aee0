package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemfdTest
{
    private static final long SIZE = 2 * 1024 * 1024;

    @Test
    @Timeout(10)
    void shouldSeeWritesThroughOneMappingInAnother() throws Exception
    {
        final int fd = Memfd.create("xferd-test");
        MemorySegment first = null;
        MemorySegment second = null;
        MemorySegment window = null;
        try
        {
            assertThat(Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString()).startsWith("/memfd:xferd-test");
            Memfd.truncate(fd, SIZE);
            assertThat(Files.size(Path.of("/proc/self/fd/" + fd))).isEqualTo(SIZE);

            first = MappedMemory.mapShared(fd, 0, SIZE);
            second = MappedMemory.mapShared(fd, 0, SIZE);
            window = MappedMemory.mapShared(fd, 4096, 4096);
            assertThat(first.byteSize()).isEqualTo(SIZE);
            assertThat(window.byteSize()).isEqualTo(4096);
            assertThat(first.address()).isNotEqualTo(second.address());
            assertThat(first.address() % 4096).isZero();

            first.set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            first.set(ValueLayout.JAVA_LONG, 4096 + 8, 42L);
            first.set(ValueLayout.JAVA_BYTE, SIZE - 1, (byte)7);
            assertThat(second.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0x1122334455667788L);
            assertThat(second.get(ValueLayout.JAVA_BYTE, SIZE - 1)).isEqualTo((byte)7);
            assertThat(window.get(ValueLayout.JAVA_LONG, 8)).isEqualTo(42L);

            second.set(ValueLayout.JAVA_INT, 64, 0xCAFE);
            assertThat(first.get(ValueLayout.JAVA_INT, 64)).isEqualTo(0xCAFE);

            MappedMemory.adviseHugePages(first);
        }
        finally
        {
            for (final MemorySegment mapping : new MemorySegment[]{ first, second, window })
            {
                if (mapping != null)
                {
                    MappedMemory.unmap(mapping);
                }
            }
            Memfd.close(fd);
        }
    }

    @Test
    @Timeout(10)
    void shouldCreateMemfdCloseOnExec() throws Exception
    {
        final int fd = Memfd.create("xferd-cloexec");
        try
        {
            final String flagsLine = Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd)).stream()
                .filter(line -> line.startsWith("flags:")).findFirst().orElseThrow();
            final int flags = Integer.parseInt(flagsLine.substring("flags:".length()).trim(), 8);
            assertThat(flags & 02000000).as("O_CLOEXEC in %s", flagsLine).isNotZero();
        }
        finally
        {
            Memfd.close(fd);
        }
    }

    @Test
    @Timeout(10)
    void shouldMapAnonymousMemoryAndLockIt()
    {
        final MemorySegment memory = MappedMemory.mapAnonymous(SIZE);
        try
        {
            assertThat(memory.byteSize()).isEqualTo(SIZE);
            assertThat(memory.get(ValueLayout.JAVA_LONG, 1024)).isZero();
            MappedMemory.adviseHugePages(memory);
            try
            {
                MappedMemory.lock(memory.asSlice(0, 4096));
            }
            catch (final NativeException e)
            {
                // RLIMIT_MEMLOCK may forbid even one page in a container.
                assertThat(e.errno()).isIn(Errno.ENOMEM, Errno.EPERM);
            }
            memory.set(ValueLayout.JAVA_LONG, SIZE - 8, -1L);
            assertThat(memory.get(ValueLayout.JAVA_LONG, SIZE - 8)).isEqualTo(-1L);
        }
        finally
        {
            MappedMemory.unmap(memory);
        }
    }

    @Test
    @Timeout(10)
    void shouldThrowTypedExceptionsOnBadDescriptors()
    {
        assertThatThrownBy(() -> Memfd.truncate(-1, 4096))
            .isInstanceOfSatisfying(NativeException.class, e ->
            {
                assertThat(e.errno()).isEqualTo(Errno.EBADF);
                assertThat(e.function()).isEqualTo("ftruncate");
                assertThat(e.getMessage()).startsWith("ftruncate failed: EBADF (9)");
            });
        assertThatThrownBy(() -> MappedMemory.mapShared(-1, 0, 4096))
            .isInstanceOfSatisfying(NativeException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EBADF));
        assertThatThrownBy(() -> Memfd.close(-1))
            .isInstanceOfSatisfying(NativeException.class, e -> assertThat(e.function()).isEqualTo("close"));
        assertThatThrownBy(() -> MappedMemory.mapAnonymous(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
