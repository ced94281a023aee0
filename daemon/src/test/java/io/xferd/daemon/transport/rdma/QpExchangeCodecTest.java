package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.verbs.Gid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The CONNECT_QP / QP_ANSWER body: what is encoded decodes to the same endpoints; anything else is a typed error.
 */
@Timeout(10)
class QpExchangeCodecTest
{
    private static final List<QpEndpoint> ENDPOINTS = List.of(
        new QpEndpoint("mlx5_0", "mlx5_1", 0, new Gid(0xfe80_0000_0000_0000L, 0x0202_c9ff_fe12_3456L), 0x1234, 0xabcdef,
            5),
        new QpEndpoint("rxe_eth0", "mlx5_0", 17, new Gid(0, 0x0000_ffff_0a00_0001L), 0xffffff, 0, 3));

    @Test
    void shouldDecodeWhatItEncoded()
    {
        assertThat(QpExchangeCodec.decode(QpExchangeCodec.encode(ENDPOINTS))).isEqualTo(ENDPOINTS);
    }

    @Test
    void shouldRefuseATruncatedBodyAtEveryLength()
    {
        final byte[] body = QpExchangeCodec.encode(ENDPOINTS);
        for (int length = 0; length < body.length; length++)
        {
            final byte[] truncated = Arrays.copyOf(body, length);
            assertThatThrownBy(() -> QpExchangeCodec.decode(truncated))
                .as("truncated to %d bytes", length)
                .isInstanceOf(MalformedQpFrameException.class);
        }
    }

    @Test
    void shouldRefuseTrailingBytesAndCountsOutOfRange()
    {
        final byte[] body = QpExchangeCodec.encode(ENDPOINTS);

        assertThatThrownBy(() -> QpExchangeCodec.decode(Arrays.copyOf(body, body.length + 1)))
            .isInstanceOf(MalformedQpFrameException.class)
            .hasMessage("QP exchange has 1 trailing bytes");
        assertThatThrownBy(() -> QpExchangeCodec.decode(new byte[] {0, 0, 0, 0}))
            .isInstanceOf(MalformedQpFrameException.class)
            .hasMessage("QP exchange with 0 endpoints (1..1024)");
        assertThatThrownBy(() -> QpExchangeCodec.decode(new byte[] {(byte)0xff, (byte)0xff, (byte)0xff, 0x7f}))
            .isInstanceOf(MalformedQpFrameException.class);
    }

    @Test
    void shouldRefuseValuesAQpCannotTake()
    {
        final Gid gid = new Gid(0, 0x0000_ffff_0a00_0001L);
        for (final QpEndpoint bad : List.of(
            new QpEndpoint("mlx5_0", "mlx5_0", 0x10000, gid, 1, 1, 5),
            new QpEndpoint("mlx5_0", "mlx5_0", 0, gid, 0x1000000, 1, 5),
            new QpEndpoint("mlx5_0", "mlx5_0", 0, gid, 1, -1, 5),
            new QpEndpoint("mlx5_0", "mlx5_0", 0, gid, 1, 1, 0),
            new QpEndpoint("mlx5_0", "mlx5_0", 0, gid, 1, 1, 6)))
        {
            assertThatThrownBy(() -> QpExchangeCodec.decode(QpExchangeCodec.encode(List.of(bad))))
                .as("%s", bad)
                .isInstanceOf(MalformedQpFrameException.class)
                .hasMessageStartingWith("QP exchange endpoint out of range");
        }
    }

    @Test
    void shouldRefuseAnEmptyNicName()
    {
        final byte[] body = QpExchangeCodec.encode(ENDPOINTS.subList(0, 1));
        body[4] = 0; // the first NIC name's length

        assertThatThrownBy(() -> QpExchangeCodec.decode(body))
            .isInstanceOf(MalformedQpFrameException.class);
    }

    @Test
    void shouldDecodeTheRequestItEncodedWithTheRequestersIdentityAndEpoch()
    {
        final byte[] body = QpExchangeCodec.encodeRequest("10.0.0.1:12001", 0x1234_5678_9abcL, ENDPOINTS);

        assertThat(QpExchangeCodec.decodeRequest(body))
            .isEqualTo(new QpExchangeCodec.ConnectRequest("10.0.0.1:12001", 0x1234_5678_9abcL, ENDPOINTS));
        assertThatThrownBy(() -> QpExchangeCodec.decode(body)) // an answer is not a request
            .isInstanceOf(MalformedQpFrameException.class);
    }

    @Test
    void shouldRefuseATruncatedRequestAtEveryLengthAndTrailingBytes()
    {
        final byte[] body = QpExchangeCodec.encodeRequest("h:1", 7, ENDPOINTS);
        for (int length = 0; length < body.length; length++)
        {
            final byte[] truncated = Arrays.copyOf(body, length);
            assertThatThrownBy(() -> QpExchangeCodec.decodeRequest(truncated))
                .as("truncated to %d bytes", length)
                .isInstanceOf(MalformedQpFrameException.class);
        }
        assertThatThrownBy(() -> QpExchangeCodec.decodeRequest(Arrays.copyOf(body, body.length + 1)))
            .isInstanceOf(MalformedQpFrameException.class)
            .hasMessage("QP exchange has 1 trailing bytes");
    }

    @Test
    void shouldRefuseARequestWithoutARequesterOrWithAnEpochThatIsNotPositive()
    {
        final byte[] noRequester = QpExchangeCodec.encodeRequest("h:1", 7, ENDPOINTS);
        noRequester[0] = 0;
        assertThatThrownBy(() -> QpExchangeCodec.decodeRequest(noRequester))
            .isInstanceOf(MalformedQpFrameException.class)
            .hasMessage("QP request names no requester");

        for (final long epoch : new long[] {0, -1, Long.MIN_VALUE})
        {
            final byte[] body = QpExchangeCodec.encodeRequest("h:1", 7, ENDPOINTS);
            java.nio.ByteBuffer.wrap(body).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(4, epoch);
            assertThatThrownBy(() -> QpExchangeCodec.decodeRequest(body))
                .isInstanceOf(MalformedQpFrameException.class)
                .hasMessage("QP request with requester epoch " + epoch + " (must be > 0)");
        }
        assertThatThrownBy(() -> QpExchangeCodec.decodeRequest(QpExchangeCodec.encodeRequest("h:1", 7, List.of())))
            .isInstanceOf(MalformedQpFrameException.class)
            .hasMessage("QP exchange with 0 endpoints (1..1024)");
    }

    @Test
    void shouldNotEncodeARequestItWouldRefuse()
    {
        assertThatThrownBy(() -> QpExchangeCodec.encodeRequest("", 7, ENDPOINTS))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QpExchangeCodec.encodeRequest("h".repeat(256), 7, ENDPOINTS))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QpExchangeCodec.encodeRequest("h:1", 0, ENDPOINTS))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
