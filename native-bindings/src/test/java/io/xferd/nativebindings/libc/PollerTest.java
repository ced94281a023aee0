package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PollerTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(10)
    @SuppressWarnings("try") // closes the client mid-test to provoke EOF and hangup
    void shouldSeeReadableWhenDataArrivesAndHangupWhenPeerCloses()
    {
        final Path path = dir.resolve("p.sock");
        try (UnixSocket listener = UnixSocket.listen(path, 4);
            UnixSocket client = UnixSocket.connect(path);
            UnixSocket server = listener.accept();
            Arena arena = Arena.ofConfined())
        {
            final Poller poller = new Poller(4);
            final int index = poller.add(server.fd());
            assertThat(poller.size()).isEqualTo(1);
            assertThat(poller.fd(index)).isEqualTo(server.fd());

            assertThat(poller.poll(0)).isZero();
            assertThat(poller.isReadable(index)).isFalse();
            assertThat(poller.isHangup(index)).isFalse();

            final MemorySegment buffer = arena.allocate(16);
            assertThat(client.send(buffer, 0, 4)).isEqualTo(4);
            assertThat(poller.poll(5_000)).isEqualTo(1);
            assertThat(poller.isReadable(index)).isTrue();
            assertThat(poller.isHangup(index)).isFalse();
            assertThat(server.receive(buffer, 0, 16)).isEqualTo(4);

            client.close();
            assertThat(poller.poll(5_000)).isEqualTo(1);
            assertThat(poller.isHangup(index)).isTrue();
            assertThat(server.receive(buffer, 0, 16)).isZero();
        }
    }

    @Test
    @Timeout(10)
    void shouldReturnNullFromNonBlockingAcceptUntilAConnectionIsPending()
    {
        final Path path = dir.resolve("a.sock");
        try (UnixSocket listener = UnixSocket.listen(path, 4))
        {
            listener.configureBlocking(false);
            assertThat(listener.accept()).isNull();

            final Poller poller = new Poller(2);
            final int index = poller.add(listener.fd());
            assertThat(poller.poll(0)).isZero();
            try (UnixSocket client = UnixSocket.connect(path))
            {
                assertThat(poller.poll(5_000)).isEqualTo(1);
                assertThat(poller.isReadable(index)).isTrue();
                try (UnixSocket accepted = listener.accept())
                {
                    assertThat(accepted).isNotNull();
                    assertThat(accepted.isBlocking()).isTrue();
                    assertThat(accepted.peerCredentials().pid()).isEqualTo(Process.pid());
                    assertThat(client.fd()).isNotEqualTo(accepted.fd());
                }
                assertThat(listener.accept()).isNull();
            }
        }
    }

    @Test
    @Timeout(10)
    void shouldReportClosedDescriptorAsHangupAndEnforceCapacity()
    {
        final Poller poller = new Poller(1);
        final int notOpen = 999_999;
        final int index = poller.add(notOpen);
        assertThat(poller.poll(0)).isEqualTo(1);
        assertThat(poller.isHangup(index)).isTrue();
        assertThatThrownBy(() -> poller.add(0)).isInstanceOf(IllegalStateException.class);
        poller.clear();
        assertThat(poller.size()).isZero();
        assertThatThrownBy(() -> poller.isReadable(0)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
