package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Tag("integration")
class ProcessVmTest
{
    @Test
    @Timeout(10)
    void shouldReadAndWriteOwnProcess()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment source = arena.allocate(4096);
            final MemorySegment target = arena.allocate(4096);
            for (int i = 0; i < 4096; i++)
            {
                source.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 7));
            }
            final int pid = Process.pid();

            final long read;
            try
            {
                read = ProcessVm.read(pid, source.address(), target, 4096);
            }
            catch (final NativeException e)
            {
                assertThat(e.errno()).as("only a refusal is acceptable: %s", e.getMessage()).isEqualTo(Errno.EPERM);
                return;
            }
            assertThat(read).isEqualTo(4096);
            assertThat(target.mismatch(source)).isEqualTo(-1);

            final MemorySegment patch = arena.allocate(64).fill((byte)0x42);
            assertThat(ProcessVm.write(pid, source.address() + 100, patch, 64)).isEqualTo(64);
            assertThat(source.get(ValueLayout.JAVA_BYTE, 99)).isEqualTo((byte)(99 * 7));
            assertThat(source.get(ValueLayout.JAVA_BYTE, 100)).isEqualTo((byte)0x42);
            assertThat(source.get(ValueLayout.JAVA_BYTE, 163)).isEqualTo((byte)0x42);
            assertThat(source.get(ValueLayout.JAVA_BYTE, 164)).isEqualTo((byte)(164 * 7));
        }
    }

    @Test
    @Timeout(10)
    void shouldReportUnmappedRemoteAddressAndMissingProcess()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment local = arena.allocate(64);
            assertThatThrownBy(() -> ProcessVm.read(Process.pid(), 0L, local, 64))
                .isInstanceOfSatisfying(NativeException.class, e ->
                {
                    assertThat(e.errno()).isIn(Errno.EFAULT, Errno.EPERM);
                    assertThat(e.function()).isEqualTo("process_vm_readv");
                });
            assertThatThrownBy(() -> ProcessVm.write(Integer.MAX_VALUE, 4096L, local, 64))
                .isInstanceOfSatisfying(NativeException.class, e -> assertThat(e.errno()).isIn(Errno.ESRCH, Errno.EPERM));
            assertThatThrownBy(() -> ProcessVm.read(Process.pid(), 0L, local, 65))
                .isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    @Timeout(10)
    void shouldMoveBytesByAddressAndReportFailuresAsNegativeErrnoWithoutThrowing()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment source = arena.allocate(8192);
            final MemorySegment target = arena.allocate(8192);
            for (int i = 0; i < 8192; i++)
            {
                source.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 31 + 5));
            }
            final int pid = Process.pid();

            assertThat(ProcessVm.readInto(pid, source.address() + 10, target.address() + 20, 5000)).isEqualTo(5000);
            assertThat(target.asSlice(20, 5000).mismatch(source.asSlice(10, 5000))).isEqualTo(-1);
            assertThat(target.get(ValueLayout.JAVA_BYTE, 19)).isZero();
            assertThat(target.get(ValueLayout.JAVA_BYTE, 5020)).isZero();

            final MemorySegment patch = arena.allocate(100).fill((byte)0x3c);
            assertThat(ProcessVm.writeFrom(pid, target.address() + 7000, patch.address(), 100)).isEqualTo(100);
            assertThat(target.asSlice(7000, 100).toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte)0x3c);

            assertThat(ProcessVm.readInto(pid, 0L, target.address(), 64)).isEqualTo(-Errno.EFAULT);
            assertThat(ProcessVm.writeFrom(pid, 4096L, patch.address(), 64)).isEqualTo(-Errno.EFAULT);
            assertThat(ProcessVm.readInto(Integer.MAX_VALUE, source.address(), target.address(), 64))
                .isEqualTo(-Errno.ESRCH);
        }
    }

    @Test
    @Timeout(10)
    void shouldStopAtTheFirstUnmappedPageAndSayHowFarItGot()
    {
        final MemorySegment twoPages = MappedMemory.mapAnonymous(2 * 4096);
        final MemorySegment secondPage = twoPages.asSlice(4096, 4096);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment target = arena.allocate(2 * 4096);
            MappedMemory.unmap(secondPage);

            assertThat(ProcessVm.readInto(Process.pid(), twoPages.address() + 4000, target.address(), 200))
                .as("the 96 bytes before the hole").isEqualTo(96);
            assertThat(ProcessVm.readInto(Process.pid(), twoPages.address() + 4096, target.address(), 200))
                .isEqualTo(-Errno.EFAULT);
        }
        finally
        {
            MappedMemory.unmap(twoPages.asSlice(0, 4096));
        }
    }

    @Test
    @Timeout(90)
    void shouldReadAndWriteChildProcessOrReportEperm() throws Exception
    {
        final java.lang.Process child = ChildJvm.builder(VmTargetChild.class).redirectErrorStream(true).start();
        try (Arena arena = Arena.ofConfined();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.US_ASCII))
        {
            final String ready = readLineStartingWith(out, "READY ");
            final String[] fields = ready.split(" ");
            final int pid = Integer.parseInt(fields[1]);
            final long address = Long.parseLong(fields[2]);
            assertThat(pid).isEqualTo((int)child.pid());

            final MemorySegment local = arena.allocate(VmTargetChild.SIZE);
            final long read;
            try
            {
                read = ProcessVm.read(pid, address, local, VmTargetChild.SIZE);
            }
            catch (final NativeException e)
            {
                assertThat(e.errno()).as("only a refusal is acceptable: %s", e.getMessage()).isEqualTo(Errno.EPERM);
                assertThat(e.getMessage()).startsWith("process_vm_readv failed: EPERM (1)");
                return;
            }
            assertThat(read).isEqualTo(VmTargetChild.SIZE);
            for (int i = 0; i < VmTargetChild.SIZE; i++)
            {
                assertThat(local.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(VmTargetChild.pattern(i));
            }

            final MemorySegment answer = arena.allocate(VmTargetChild.ANSWER_LENGTH);
            for (int i = 0; i < VmTargetChild.ANSWER_LENGTH; i++)
            {
                answer.set(ValueLayout.JAVA_BYTE, i, VmTargetChild.answer(i));
            }
            assertThat(ProcessVm.write(pid, address + VmTargetChild.ANSWER_OFFSET, answer, VmTargetChild.ANSWER_LENGTH))
                .isEqualTo(VmTargetChild.ANSWER_LENGTH);
            in.write("CHECK\n");
            in.flush();
            assertThat(readLineStartingWith(out, "")).isEqualTo("OK");
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(child.exitValue()).isZero();
        }
        finally
        {
            ChildJvm.destroy(child);
        }
    }

    /**
     * Skips JVM warnings the child may print first; bounded by the child's own watchdog, which ends the stream.
     */
    private static String readLineStartingWith(final BufferedReader out, final String prefix) throws Exception
    {
        final StringBuilder seen = new StringBuilder();
        for (int lines = 0; lines < 100; lines++)
        {
            final String line = out.readLine();
            if (line == null)
            {
                break;
            }
            if (line.startsWith(prefix) && !line.startsWith("WARNING"))
            {
                return line;
            }
            seen.append(line).append('\n');
        }
        throw new AssertionError("child did not print '" + prefix + "'; output:\n" + seen);
    }
}
