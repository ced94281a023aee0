package io.xferd.perf;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * A plain TCP request/response round trip (what netperf's TCP_RR measures), the baseline of a single small xferd
 * READ between two hosts: the client sends a request of {@code requestBytes} and waits for a response of
 * {@code responseBytes} (4 KiB: the READ's payload), one at a time, blocking sockets, TCP_NODELAY. No
 * dependencies beyond the JDK, so {@code java perf/src/main/java/io/xferd/perf/TcpPingPong.java ...} runs it
 * from source.
 * <pre>
 *   TcpPingPong server ADDRESS PORT [REQUEST_BYTES RESPONSE_BYTES]
 *   TcpPingPong client ADDRESS PORT [REQUEST_BYTES RESPONSE_BYTES WARMUP_ROUNDS ROUNDS]
 * </pre>
 * The client prints one line: {@code RESULT tcp_rr request=.. response=.. rounds=.. p50_us=.. p99_us=.. mean_us=..}.
 */
public final class TcpPingPong
{
    private TcpPingPong()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final InetSocketAddress address = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        final int request = args.length > 3 ? Integer.parseInt(args[3]) : 64;
        final int response = args.length > 4 ? Integer.parseInt(args[4]) : 4096;
        if ("server".equals(args[0]))
        {
            serve(address, request, response);
        }
        else
        {
            final int warmup = args.length > 5 ? Integer.parseInt(args[5]) : 20_000;
            final int rounds = args.length > 6 ? Integer.parseInt(args[6]) : 50_000;
            final long[] nanos = ping(address, request, response, warmup, rounds);
            Arrays.sort(nanos);
            final double mean = Arrays.stream(nanos).average().orElse(0);
            System.out.printf(Locale.ROOT, "RESULT tcp_rr request=%d response=%d rounds=%d p50_us=%.1f p99_us=%.1f " +
                "mean_us=%.1f%n", request, response, rounds, nanos[rounds / 2] / 1e3,
                nanos[(int)(rounds * 0.99)] / 1e3, mean / 1e3);
        }
    }

    /**
     * Answer every request of every connection, one connection at a time, until killed.
     */
    static void serve(final InetSocketAddress address, final int request, final int response) throws IOException
    {
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(address);
            System.out.println("LISTENING " + server.getLocalAddress());
            final ByteBuffer in = ByteBuffer.allocateDirect(request);
            final ByteBuffer out = ByteBuffer.allocateDirect(response);
            while (true)
            {
                try (SocketChannel channel = server.accept())
                {
                    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    while (readFully(channel, in.clear()))
                    {
                        writeFully(channel, out.clear());
                    }
                }
            }
        }
    }

    /**
     * @return the round-trip times of the measured rounds, in nanoseconds.
     */
    static long[] ping(final InetSocketAddress address, final int request, final int response, final int warmup,
        final int rounds) throws IOException
    {
        final long[] nanos = new long[rounds];
        try (SocketChannel channel = SocketChannel.open(address))
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final ByteBuffer out = ByteBuffer.allocateDirect(request);
            final ByteBuffer in = ByteBuffer.allocateDirect(response);
            for (int i = -warmup; i < rounds; i++)
            {
                final long start = System.nanoTime();
                writeFully(channel, out.clear());
                if (!readFully(channel, in.clear()))
                {
                    throw new IOException("the server closed the connection");
                }
                if (i >= 0)
                {
                    nanos[i] = System.nanoTime() - start;
                }
            }
        }
        return nanos;
    }

    private static boolean readFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer) < 0)
            {
                return false;
            }
        }
        return true;
    }

    private static void writeFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }
}
