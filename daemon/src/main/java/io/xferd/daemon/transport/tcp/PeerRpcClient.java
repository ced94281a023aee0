package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.TransferStatus;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A control connection to another daemon's RPC port, authenticated by the handshake, for requests a transport
 * makes while opening a peer (the segment descriptor, the RDMA QP exchange). Every blocking step is bounded by
 * the timeout: a watchdog closes the connection when it passes. Control path.
 */
public final class PeerRpcClient implements AutoCloseable
{
    private final SocketChannel channel;
    private final String peerAddress;
    private final ScheduledFuture<?> timeout;
    private final long timeoutMs;
    private PeerSession session;

    private PeerRpcClient(
        final SocketChannel channel, final String peerAddress, final ScheduledFuture<?> timeout, final long timeoutMs)
    {
        this.channel = channel;
        this.peerAddress = peerAddress;
        this.timeout = timeout;
        this.timeoutMs = timeoutMs;
    }

    /**
     * @return the socket address of a peer's {@code host:port} (resolving the host).
     * @throws IOException saying the address is not {@code host:port}.
     */
    static InetSocketAddress socketAddress(final String peerAddress) throws IOException
    {
        final int colon = peerAddress.lastIndexOf(':');
        try
        {
            return new InetSocketAddress(peerAddress.substring(0, colon),
                Integer.parseInt(peerAddress.substring(colon + 1)));
        }
        catch (final RuntimeException ex)
        {
            throw new IOException("not a host:port: " + peerAddress);
        }
    }

    /**
     * Connect to {@code host:port} and pass the handshake, all within {@code timeoutMs} (which also bounds every
     * later request on this connection).
     *
     * @param authenticator this daemon's ({@link PeerAuthenticator#of}).
     */
    public static PeerRpcClient connect(
        final String peerAddress, final PeerAuthenticator authenticator, final long timeoutMs,
        final ScheduledExecutorService watchdog) throws IOException
    {
        final InetSocketAddress address = socketAddress(peerAddress);
        final SocketChannel channel = SocketChannel.open();
        final ScheduledFuture<?> timeout = watchdog.schedule(() -> closeQuietly(channel), timeoutMs,
            TimeUnit.MILLISECONDS);
        final PeerRpcClient client = new PeerRpcClient(channel, peerAddress, timeout, timeoutMs);
        try
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(address, (int)timeoutMs);
            client.session = PeerHandshake.asInitiator(channel, authenticator);
            return client;
        }
        catch (final IOException ex)
        {
            client.close();
            throw client.explain(ex);
        }
    }

    /**
     * @return the descriptor of the peer's segment {@code segmentName} (checked to be that segment's).
     * @throws PeerRefusedException when the peer has no such segment.
     * @throws IllegalArgumentException when the peer answers with another segment's descriptor.
     */
    public SegmentDescriptor segment(final String segmentName) throws IOException
    {
        final ByteBuffer answer = request(PeerProtocol.GET_SEGMENT, segmentName.getBytes(StandardCharsets.UTF_8),
            PeerProtocol.DESCRIPTOR);
        final int status = answer.getInt();
        final String text = FrameIo.utf8(answer);
        if (status != TransferStatus.OK)
        {
            throw new PeerRefusedException(text);
        }
        return SegmentDescriptor.fromJson(text).requireSegment(segmentName);
    }

    /**
     * Send a request frame and wait for its answer.
     *
     * @return the answer's body.
     * @throws PeerRefusedException with the peer's reason when it answers REFUSE.
     */
    public byte[] exchange(final int type, final byte[] body, final int answerType) throws IOException
    {
        final ByteBuffer answer = request(type, body, answerType);
        final byte[] bytes = new byte[answer.remaining()];
        answer.get(bytes);
        return bytes;
    }

    private ByteBuffer request(final int type, final byte[] body, final int answerType) throws IOException
    {
        try
        {
            FrameIo.sendFrame(channel, session.out(), type, body);
            return FrameIo.receiveFrame(channel, session.in(), answerType);
        }
        catch (final PeerRefusedException ex)
        {
            throw ex;
        }
        catch (final IOException ex)
        {
            throw explain(ex);
        }
    }

    private IOException explain(final IOException ex)
    {
        if (ex instanceof PeerRefusedException)
        {
            return ex;
        }
        if (!channel.isOpen() || timeout.isDone())
        {
            return new IOException("peer " + peerAddress + " did not answer within " + timeoutMs + " ms");
        }
        return new IOException("peer " + peerAddress + ": " + ex.getMessage(), ex);
    }

    @Override
    public void close()
    {
        timeout.cancel(false);
        closeQuietly(channel);
    }

    private static void closeQuietly(final SocketChannel channel)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
    }
}
