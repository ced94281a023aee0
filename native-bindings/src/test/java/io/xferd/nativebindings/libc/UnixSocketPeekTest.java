package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(30)
class UnixSocketPeekTest
{
    @Test
    void shouldSeeThePeerCloseWithoutTakingBytesOutOfTheStream(@TempDir final Path dir)
    {
        try (Arena arena = Arena.ofConfined();
            UnixSocket listener = UnixSocket.listen(dir.resolve("s.sock"), 4);
            UnixSocket client = UnixSocket.connect(dir.resolve("s.sock"));
            UnixSocket server = listener.accept())
        {
            final MemorySegment scratch = arena.allocate(8);
            final MemorySegment buffer = arena.allocate(8);
            assertThat(client.isPeerClosed(scratch)).isFalse();

            buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte)42);
            server.send(buffer, 0, 1);
            assertThat(client.isPeerClosed(scratch)).isFalse();
            assertThat(client.isPeerClosed(scratch)).isFalse();
            // the peeked byte is still there
            buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte)0);
            assertThat(client.receive(buffer, 0, 1)).isEqualTo(1);
            assertThat(buffer.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte)42);

            server.close();
            assertThat(client.isPeerClosed(scratch)).isTrue();
        }
    }
}
