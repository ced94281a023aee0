package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.verbs.Gid;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of the CONNECT_QP request and the QP_ANSWER answer on the authenticated RPC connection
 * ({@link io.xferd.daemon.transport.PeerProtocol}), little-endian like every peer frame. A CONNECT_QP body names its
 * requester first, so that the answering daemon keeps one set of answering QPs per requester and destroys the
 * previous set when the same requester connects again (same or newer epoch):
 * <pre>
 *  +---------------------------------------------------------------+
 *  | u8 requester length, requester rpc address (UTF-8 host:port)  |
 *  +---------------------------------------------------------------+
 *  |                 int64 requester epoch (&gt; 0)                   |
 *  +---------------------------------------------------------------+
 *  | the endpoint list, as below                                   |
 *  +---------------------------------------------------------------+
 * </pre>
 * A QP_ANSWER body is the endpoint list alone:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                        endpoint count                         |
 *  +---------------------------------------------------------------+
 *  | per endpoint:                                                 |
 *  |  u8 nic length, nic (UTF-8), u8 peer nic length, peer nic     |
 *  |  int32 lid, int64 GID subnet prefix, int64 GID interface id   |
 *  |  int32 qpn, int32 psn, int32 mtu                              |
 *  +---------------------------------------------------------------+
 * </pre>
 * An answer has one endpoint per requested endpoint, in the same order. Control path: allocates freely.
 */
public final class QpExchangeCodec
{
    public static final int MAX_ENDPOINTS = 1024;
    private static final int FIXED_ENTRY_LENGTH = 2 + 4 + 16 + 12;
    private static final int QPN_MASK = 0xFFFFFF;
    private static final int IBV_MTU_256 = 1;
    private static final int IBV_MTU_4096 = 5;

    private QpExchangeCodec()
    {
    }

    /**
     * A decoded CONNECT_QP body: who asks (its rpc address and epoch) and the endpoints of its QPs.
     */
    public record ConnectRequest(String requester, long epoch, List<QpEndpoint> endpoints)
    {
    }

    /**
     * @return a CONNECT_QP body from {@code requester} (its rpc address) at {@code epoch} (its start).
     */
    public static byte[] encodeRequest(final String requester, final long epoch, final List<QpEndpoint> endpoints)
    {
        if (epoch <= 0)
        {
            throw new IllegalArgumentException("requester epoch must be positive: " + epoch);
        }
        final byte[] name = utf8(requester, "requester address");
        final byte[] list = encode(endpoints);
        return ByteBuffer.allocate(1 + name.length + 8 + list.length).order(ByteOrder.LITTLE_ENDIAN)
            .put((byte)name.length).put(name).putLong(epoch).put(list).array();
    }

    /**
     * @throws MalformedQpFrameException when the body is truncated, has trailing bytes, an empty requester, an
     *                                   epoch that is not positive, or a count or value out of range.
     */
    public static ConnectRequest decodeRequest(final byte[] body)
    {
        final ByteBuffer buffer = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        try
        {
            final int length = Byte.toUnsignedInt(buffer.get());
            if (length == 0)
            {
                throw new MalformedQpFrameException("QP request names no requester");
            }
            final byte[] name = new byte[length];
            buffer.get(name);
            final long epoch = buffer.getLong();
            if (epoch <= 0)
            {
                throw new MalformedQpFrameException("QP request with requester epoch " + epoch + " (must be > 0)");
            }
            return new ConnectRequest(new String(name, StandardCharsets.UTF_8), epoch, decodeEndpoints(buffer, body));
        }
        catch (final BufferUnderflowException ex)
        {
            throw new MalformedQpFrameException("QP request truncated at byte " + buffer.position() + " of " +
                body.length);
        }
    }

    public static byte[] encode(final List<QpEndpoint> endpoints)
    {
        if (endpoints.size() > MAX_ENDPOINTS)
        {
            throw new IllegalArgumentException("at most " + MAX_ENDPOINTS + " endpoints: " + endpoints.size());
        }
        int length = 4;
        for (final QpEndpoint endpoint : endpoints)
        {
            length += FIXED_ENTRY_LENGTH + utf8(endpoint.nic(), "NIC name").length +
                utf8(endpoint.peerNic(), "NIC name").length;
        }
        final ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(endpoints.size());
        for (final QpEndpoint endpoint : endpoints)
        {
            putName(buffer, endpoint.nic());
            putName(buffer, endpoint.peerNic());
            buffer.putInt(endpoint.lid())
                .putLong(endpoint.gid().subnetPrefix())
                .putLong(endpoint.gid().interfaceId())
                .putInt(endpoint.qpn())
                .putInt(endpoint.psn())
                .putInt(endpoint.mtu());
        }
        return buffer.array();
    }

    /**
     * @throws MalformedQpFrameException when the body is truncated, has trailing bytes or a count out of range.
     */
    public static List<QpEndpoint> decode(final byte[] body)
    {
        return decodeEndpoints(ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN), body);
    }

    /**
     * The endpoint list from {@code buffer}'s position to its end.
     */
    private static List<QpEndpoint> decodeEndpoints(final ByteBuffer buffer, final byte[] body)
    {
        try
        {
            final int count = buffer.getInt();
            if (count < 1 || count > MAX_ENDPOINTS)
            {
                throw new MalformedQpFrameException("QP exchange with " + count + " endpoints (1.." +
                    MAX_ENDPOINTS + ")");
            }
            final List<QpEndpoint> endpoints = new ArrayList<>(count);
            for (int i = 0; i < count; i++)
            {
                final String nic = getName(buffer);
                final String peerNic = getName(buffer);
                final int lid = buffer.getInt();
                final Gid gid = new Gid(buffer.getLong(), buffer.getLong());
                endpoints.add(checked(
                    new QpEndpoint(nic, peerNic, lid, gid, buffer.getInt(), buffer.getInt(), buffer.getInt())));
            }
            if (buffer.hasRemaining())
            {
                throw new MalformedQpFrameException("QP exchange has " + buffer.remaining() + " trailing bytes");
            }
            return endpoints;
        }
        catch (final BufferUnderflowException ex)
        {
            throw new MalformedQpFrameException("QP exchange truncated at byte " + buffer.position() + " of " +
                body.length);
        }
    }

    /**
     * Values the QP's attributes cannot take would only fail later, as an EINVAL of {@code ibv_modify_qp}.
     */
    private static QpEndpoint checked(final QpEndpoint endpoint)
    {
        if ((endpoint.lid() & ~0xFFFF) != 0 || (endpoint.qpn() & ~QPN_MASK) != 0 || (endpoint.psn() & ~QPN_MASK) != 0 ||
            endpoint.mtu() < IBV_MTU_256 || endpoint.mtu() > IBV_MTU_4096)
        {
            throw new MalformedQpFrameException(String.format(
                "QP exchange endpoint out of range: lid %d (16 bits), qpn 0x%x and psn 0x%x (24 bits), mtu %d (1..5)",
                endpoint.lid(), endpoint.qpn(), endpoint.psn(), endpoint.mtu()));
        }
        return endpoint;
    }

    private static void putName(final ByteBuffer buffer, final String name)
    {
        final byte[] bytes = utf8(name, "NIC name");
        buffer.put((byte)bytes.length).put(bytes);
    }

    private static String getName(final ByteBuffer buffer)
    {
        final int length = Byte.toUnsignedInt(buffer.get());
        if (length == 0)
        {
            throw new MalformedQpFrameException("QP exchange names an empty NIC");
        }
        final byte[] bytes = new byte[length];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] utf8(final String name, final String what)
    {
        final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length == 0 || bytes.length > 255)
        {
            throw new IllegalArgumentException(what + " must be 1..255 bytes: " + name);
        }
        return bytes;
    }
}
