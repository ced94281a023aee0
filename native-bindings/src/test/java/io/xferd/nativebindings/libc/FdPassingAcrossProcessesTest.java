package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Tag("integration")
class FdPassingAcrossProcessesTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(90)
    void shouldShareMemfdWithChildProcessThroughScmRights() throws Exception
    {
        final Path socketPath = dir.resolve("control.sock");
        final Path log = dir.resolve("child.log");
        java.lang.Process child = null;
        MemorySegment mapping = null;
        int receivedFd = -1;
        try (UnixSocket listener = UnixSocket.listen(socketPath, 4); Arena arena = Arena.ofConfined())
        {
            child = ChildJvm.startLoggingTo(log, FdPassingChild.class, socketPath.toString());

            final Poller poller = new Poller(1);
            poller.add(listener.fd());
            assertThat(poller.poll(30_000)).as("child connected; log: %s", log).isEqualTo(1);
            try (UnixSocket connection = listener.accept())
            {
                assertThat(connection).isNotNull();
                assertThat(connection.peerCredentials().pid()).isEqualTo((int)child.pid());
                assertThat(connection.peerCredentials().uid()).isEqualTo(
                    (int)Files.getAttribute(Path.of("/proc/self"), "unix:uid"));

                poller.clear();
                poller.add(connection.fd());
                assertThat(poller.poll(30_000)).isEqualTo(1);

                final MemorySegment buffer = arena.allocate(16);
                final int[] fds = new int[1];
                assertThat(connection.receiveWithFd(buffer, 0, 16, fds)).isEqualTo(1);
                assertThat(buffer.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte)'F');
                receivedFd = fds[0];
                assertThat(receivedFd).isGreaterThanOrEqualTo(0);

                mapping = MappedMemory.mapShared(receivedFd, 0, FdPassingChild.SIZE);
                for (int i = 0; i < FdPassingChild.PATTERN_LENGTH; i++)
                {
                    assertThat(mapping.get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo(
                        FdPassingChild.pattern(i));
                }
                for (int i = 0; i < FdPassingChild.ANSWER_LENGTH; i++)
                {
                    mapping.set(ValueLayout.JAVA_BYTE, FdPassingChild.ANSWER_OFFSET + i, FdPassingChild.answer(i));
                }
                buffer.set(ValueLayout.JAVA_BYTE, 0, (byte)'A');
                assertThat(connection.send(buffer, 0, 1)).isEqualTo(1);

                assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(child.exitValue()).as("child exit; log:%n%s", Files.readString(log)).isZero();
            }
        }
        finally
        {
            if (mapping != null)
            {
                MappedMemory.unmap(mapping);
            }
            if (receivedFd >= 0)
            {
                Memfd.close(receivedFd);
            }
            ChildJvm.destroy(child);
            Files.deleteIfExists(socketPath);
        }
    }
}
