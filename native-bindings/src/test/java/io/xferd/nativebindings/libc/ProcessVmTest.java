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
