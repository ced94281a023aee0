package io.xferd.daemon.control;

import io.xferd.ipc.ControlMessages;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * WELCOME tells a client which transport the daemon serves, so that an engine asking for "rdma" is refused by a
 * daemon serving TCP (and told whether TCP stands in for RDMA by the operator's choice).
 */
class WelcomeTransportCodeTest
{
    @Test
    void shouldSayTcpForATcpDaemon()
    {
        assertThat(ControlConductor.transportCode("tcp")).isEqualTo(ControlMessages.TRANSPORT_TCP);
        assertThat(ControlConductor.transportCode(null)).isEqualTo(ControlMessages.TRANSPORT_TCP);
    }

    @Test
    void shouldSayRdmaForAnRdmaDaemon()
    {
        assertThat(ControlConductor.transportCode("rdma on mlx5_0,mlx5_1")).isEqualTo(ControlMessages.TRANSPORT_RDMA);
    }

    @Test
    void shouldFlagTcpServedInsteadOfRdmaThroughProtocolFallback()
    {
        assertThat(ControlConductor.transportCode("tcp (protocol_fallback, because RDMA is not available: no devices)"))
            .isEqualTo(ControlMessages.TRANSPORT_TCP | ControlMessages.TRANSPORT_FALLBACK);
    }
}
