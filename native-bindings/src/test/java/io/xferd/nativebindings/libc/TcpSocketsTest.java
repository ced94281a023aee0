package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

class TcpSocketsTest
{
    private static final Path AVAILABLE = Path.of("/proc/sys/net/ipv4/tcp_available_congestion_control");

    @Test
    @Timeout(10)
    void shouldSetAndReadBackTheCongestionControlOfAConnectedLoopbackSocket() throws Throwable
    {
        try (ServerSocketChannel server = ServerSocketChannel.open();
            SocketChannel client = SocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept())
            {
                final int clientFd = fd(client);
                final int acceptedFd = fd(accepted);

                TcpSockets.setCongestionControl(clientFd, "reno");
                assertThat(TcpSockets.congestionControl(clientFd)).isEqualTo("reno");

                if (available().contains("cubic"))
                {
                    TcpSockets.setCongestionControl(acceptedFd, "cubic");
                    assertThat(TcpSockets.congestionControl(acceptedFd)).isEqualTo("cubic");
                }

                // the connection still carries bytes after the switch
                client.write(ByteBuffer.wrap(new byte[]{1, 2, 3}));
                final ByteBuffer received = ByteBuffer.allocate(3);
                while (received.hasRemaining())
                {
                    accepted.read(received);
                }
                assertThat(received.array()).containsExactly(1, 2, 3);
            }
        }
    }

    @Test
    @Timeout(10)
    void shouldReadTheHostsDefaultFromAFreshSocket() throws Throwable
    {
        final Path hostDefault = Path.of("/proc/sys/net/ipv4/tcp_congestion_control");
        assumeThat(Files.isReadable(hostDefault)).isTrue();
        try (SocketChannel socket = SocketChannel.open())
        {
            assertThat(TcpSockets.congestionControl(fd(socket))).isEqualTo(Files.readString(hostDefault).strip());
        }
    }

    @Test
    @Timeout(10)
    void shouldFailWithEnoentForAnAlgorithmTheKernelDoesNotHave() throws Throwable
    {
        try (SocketChannel socket = SocketChannel.open())
        {
            final int fd = fd(socket);
            final String before = TcpSockets.congestionControl(fd);
            assertThatThrownBy(() -> TcpSockets.setCongestionControl(fd, "nosuchcc"))
                .isInstanceOfSatisfying(NativeException.class, e ->
                {
                    assertThat(e.function()).isEqualTo("setsockopt");
                    assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                    assertThat(e.getMessage()).contains("TCP_CONGESTION nosuchcc");
                });
            assertThat(TcpSockets.congestionControl(fd)).isEqualTo(before);
        }
    }

    @Test
    void shouldRejectNamesThatDoNotFitTheKernelsBuffer()
    {
        assertThatThrownBy(() -> TcpSockets.setCongestionControl(0, "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TcpSockets.setCongestionControl(0, "a".repeat(16)))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldFailTypedOnAFileDescriptorThatIsNotASocket()
    {
        assertThatThrownBy(() -> TcpSockets.congestionControl(-1))
            .isInstanceOfSatisfying(NativeException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EBADF));
    }

    private static List<String> available() throws Exception
    {
        return Files.isReadable(AVAILABLE) ? List.of(Files.readString(AVAILABLE).strip().split("\\s+")) : List.of();
    }

    private static int fd(final SocketChannel channel) throws Throwable
    {
        // the tests run with jvm.flags, which open java.base/sun.nio.ch
        final Class<?> selChImpl = Class.forName("sun.nio.ch.SelChImpl");
        final MethodHandle getFdVal = MethodHandles.lookup()
            .findVirtual(selChImpl, "getFDVal", MethodType.methodType(int.class));
        return (int)getFdVal.invoke(channel);
    }
}
