package io.xferd.daemon.rdma;

import io.xferd.nativebindings.verbs.Gid;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of the CONNECT_QP request and the QP_ANSWER answer on the authenticated RPC connection
 * ({@link io.xferd.daemon.peer.PeerProtocol}), little-endian like every peer frame:
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

    public static byte[] encode(final List<QpEndpoint> endpoints)
    {
        if (endpoints.size() > MAX_ENDPOINTS)
        {
            throw new IllegalArgumentException("at most " + MAX_ENDPOINTS + " endpoints: " + endpoints.size());
        }
        int length = 4;
        for (final QpEndpoint endpoint : endpoints)
        {
            length += FIXED_ENTRY_LENGTH + utf8(endpoint.nic()).length + utf8(endpoint.peerNic()).length;
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
        final ByteBuffer buffer = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
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
        final byte[] bytes = utf8(name);
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

    private static byte[] utf8(final String name)
    {
        final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length == 0 || bytes.length > 255)
        {
            throw new IllegalArgumentException("NIC name must be 1..255 bytes: " + name);
        }
        return bytes;
    }
}
