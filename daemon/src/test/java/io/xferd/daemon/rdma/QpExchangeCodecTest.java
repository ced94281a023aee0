package io.xferd.daemon.rdma;

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
}
