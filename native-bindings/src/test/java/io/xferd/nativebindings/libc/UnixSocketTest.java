package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class UnixSocketTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(10)
    @SuppressWarnings("try") // closes the client mid-test to provoke EOF and hangup
    void shouldSendAndReceiveAndSeeEndOfStream()
    {
        final Path path = dir.resolve("s.sock");
        try (UnixSocket listener = UnixSocket.listen(path, 4);
            UnixSocket client = UnixSocket.connect(path);
            UnixSocket server = listener.accept();
            Arena arena = Arena.ofConfined())
        {
            final MemorySegment out = arena.allocate(64);
            final MemorySegment in = arena.allocate(64);
            out.setString(8, "hello");
            assertThat(client.send(out, 8, 6)).isEqualTo(6);
            assertThat(server.receive(in, 16, 48)).isEqualTo(6);
            assertThat(in.getString(16)).isEqualTo("hello");

            assertThat(server.peerCredentials().pid()).isEqualTo(Process.pid());
            assertThat(client.peerCredentials().pid()).isEqualTo((int)ProcessHandle.current().pid());

            client.close();
            assertThat(client.isClosed()).isTrue();
            assertThat(server.receive(in, 0, 64)).isZero();
            assertThatThrownBy(() -> server.send(out, 0, 1))
                .isInstanceOfSatisfying(NativeException.class,
                    e -> assertThat(e.errno()).isIn(Errno.EPIPE, Errno.ECONNRESET));
        }
    }

    @Test
    @Timeout(10)
    void shouldPassDescriptorWithinProcessAndReportMessagesWithout()
    {
        final Path path = dir.resolve("fd.sock");
        final int memfd = Memfd.create("xferd-pass");
        final int[] received = { -1 };
        MemorySegment original = null;
        MemorySegment copy = null;
        try (UnixSocket listener = UnixSocket.listen(path, 4);
            UnixSocket client = UnixSocket.connect(path);
            UnixSocket server = listener.accept();
            Arena arena = Arena.ofConfined())
        {
            Memfd.truncate(memfd, 4096);
            original = MappedMemory.mapShared(memfd, 0, 4096);
            original.set(ValueLayout.JAVA_LONG, 0, 0xFEEDL);

            final MemorySegment buffer = arena.allocate(32);
            buffer.set(ValueLayout.JAVA_INT, 0, 1234);
            assertThat(client.sendWithFd(buffer, 0, 4, memfd)).isEqualTo(4);
            buffer.set(ValueLayout.JAVA_INT, 0, 0);
            assertThat(server.receiveWithFd(buffer, 0, 32, received)).isEqualTo(4);
            assertThat(buffer.get(ValueLayout.JAVA_INT, 0)).isEqualTo(1234);
            assertThat(received[0]).isNotNegative().isNotEqualTo(memfd);

            copy = MappedMemory.mapShared(received[0], 0, 4096);
            assertThat(copy.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0xFEEDL);

            final int[] none = { 99 };
            assertThat(client.send(buffer, 0, 3)).isEqualTo(3);
            assertThat(server.receiveWithFd(buffer, 8, 3, none)).isEqualTo(3);
            assertThat(none[0]).isEqualTo(-1);

            server.configureBlocking(false);
            assertThat(server.isBlocking()).isFalse();
            assertThat(server.receive(buffer, 0, 32)).isEqualTo(-1);
            assertThat(server.receiveWithFd(buffer, 0, 32, none)).isEqualTo(-1);
            assertThat(none[0]).isEqualTo(-1);
        }
        finally
        {
            if (copy != null)
            {
                MappedMemory.unmap(copy);
            }
            if (original != null)
            {
                MappedMemory.unmap(original);
            }
            if (received[0] >= 0)
            {
                Memfd.close(received[0]);
            }
            Memfd.close(memfd);
        }
    }

    @Test
    @Timeout(10)
    void shouldRejectHeapBuffersForFdPassingAndOutOfRangeSlices()
    {
        final Path path = dir.resolve("h.sock");
        try (UnixSocket listener = UnixSocket.listen(path, 1);
            UnixSocket client = UnixSocket.connect(path);
            UnixSocket server = listener.accept();
            Arena arena = Arena.ofConfined())
        {
            assertThat(server).isNotNull();
            final MemorySegment heap = MemorySegment.ofArray(new byte[8]);
            assertThatThrownBy(() -> client.sendWithFd(heap, 0, 1, 0)).isInstanceOf(IllegalArgumentException.class);
            final MemorySegment small = arena.allocate(8);
            assertThatThrownBy(() -> client.send(small, 4, 8)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    @Timeout(10)
    void shouldFailToListenOnExistingPath() throws Exception
    {
        final Path path = dir.resolve("taken.sock");
        Files.createFile(path);
        assertThatThrownBy(() -> UnixSocket.listen(path, 1))
            .isInstanceOfSatisfying(NativeException.class, e ->
            {
                assertThat(e.errno()).isEqualTo(Errno.EADDRINUSE);
                assertThat(e.function()).isEqualTo("bind");
                assertThat(e.getMessage()).contains(path.toString());
            });
    }

    @Test
    @Timeout(10)
    void shouldRefuseConnectionToMissingOrDeadSocket()
    {
        final Path missing = dir.resolve("missing.sock");
        assertThatThrownBy(() -> UnixSocket.connect(missing))
            .isInstanceOfSatisfying(NativeException.class, e ->
            {
                assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                assertThat(e.function()).isEqualTo("connect");
                assertThat(e.getMessage())
                    .startsWith("connect failed: ENOENT (2) No such file or directory")
                    .endsWith("path=" + missing);
            });

        final Path stale = dir.resolve("stale.sock");
        UnixSocket.listen(stale, 1).close();
        assertThat(stale).exists();
        assertThatThrownBy(() -> UnixSocket.connect(stale))
            .isInstanceOfSatisfying(NativeException.class, e ->
            {
                assertThat(e.errno()).isEqualTo(Errno.ECONNREFUSED);
                assertThat(e.getMessage()).startsWith("connect failed: ECONNREFUSED (111)");
            });
    }

    @Test
    @Timeout(10)
    void shouldRejectPathsThatDoNotFitSunPath()
    {
        final Path tooLong = dir.resolve("x".repeat(120));
        assertThatThrownBy(() -> UnixSocket.connect(tooLong)).isInstanceOf(IllegalArgumentException.class);
    }
}
