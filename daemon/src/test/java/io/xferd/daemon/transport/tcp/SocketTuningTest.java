package io.xferd.daemon.transport.tcp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The congestion control of a peer connection is what {@code --tcp-congestion} names, read back from the kernel;
 * a name the kernel does not have leaves the connection working on the host's algorithm.
 */
@Timeout(10)
class SocketTuningTest
{
    @Test
    void shouldSetTheConfiguredAlgorithmOnBothEndsOfALoopbackConnection() throws Exception
    {
        final String wanted = "reno".equals(SocketTuning.hostCongestion()) ? "cubic" : "reno";
        final SocketTuning tuning = new SocketTuning(wanted);
        try (ServerSocketChannel server = ServerSocketChannel.open();
            SocketChannel client = SocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            assertThat(tuning.apply(client, "127.0.0.1")).isTrue(); // before connect, as PeerConnection does
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept())
            {
                assertThat(tuning.apply(accepted, SocketTuning.peerOf(accepted))).isTrue();

                assertThat(SocketTuning.congestionControl(client)).isEqualTo(wanted);
                assertThat(SocketTuning.congestionControl(accepted)).isEqualTo(wanted);
                assertCarriesBytes(client, accepted);
            }
        }
    }

    @Test
    void shouldStartAcceptedConnectionsOnTheListenersAlgorithm() throws Exception
    {
        final String wanted = "reno".equals(SocketTuning.hostCongestion()) ? "cubic" : "reno";
        try (ServerSocketChannel server = ServerSocketChannel.open();
            SocketChannel client = SocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            assertThat(new SocketTuning(wanted).applyToListener(server)).isTrue();
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept())
            {
                // nothing set on the accepted socket itself: it inherited the listener's
                assertThat(SocketTuning.congestionControl(accepted)).isEqualTo(wanted);
                assertThat(SocketTuning.congestionControl(client)).isEqualTo(SocketTuning.hostCongestion());
            }
        }
    }

    @Test
    void shouldLeaveTheHostsAlgorithmWhenNoneIsConfigured() throws Exception
    {
        try (SocketChannel channel = SocketChannel.open())
        {
            final String before = SocketTuning.congestionControl(channel);
            assertThat(new SocketTuning(null).apply(channel, "127.0.0.1")).isTrue();
            assertThat(SocketTuning.congestionControl(channel)).isEqualTo(before);
        }
    }

    @Test
    void shouldKeepTheHostsAlgorithmAndAWorkingConnectionWhenTheKernelLacksTheNamedOne() throws Exception
    {
        final SocketTuning tuning = new SocketTuning("nosuchcc");
        try (ServerSocketChannel server = ServerSocketChannel.open();
            SocketChannel client = SocketChannel.open())
        {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            final String before = SocketTuning.congestionControl(client);
            assertThat(tuning.apply(client, "127.0.0.1")).isFalse();
            assertThat(tuning.apply(client, "127.0.0.1")).isFalse(); // warned once, refused every time
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept())
            {
                assertThat(SocketTuning.congestionControl(client)).isEqualTo(before);
                assertCarriesBytes(client, accepted);
            }
        }
    }

    private static void assertCarriesBytes(final SocketChannel from, final SocketChannel to) throws Exception
    {
        from.write(ByteBuffer.wrap(new byte[]{9, 8, 7, 6}));
        final ByteBuffer received = ByteBuffer.allocate(4);
        while (received.hasRemaining())
        {
            assertThat(to.read(received)).isNotNegative();
        }
        assertThat(received.array()).containsExactly(9, 8, 7, 6);
    }
}
