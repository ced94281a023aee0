package io.xferd.daemon.transport;

import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.verbs.Verbs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The transport and metadata backend a configuration asks for are served, or refused with what to set instead;
 * never swapped for another.
 */
@Timeout(10)
class TransportSelectorTest
{
    private static final Supplier<Availability> NOT_ASKED = () ->
    {
        throw new AssertionError("RDMA availability must not be probed for tcp");
    };

    @Test
    void shouldSelectTcpWithoutProbingRdma()
    {
        assertThat(TransportSelector.select(new DaemonContext().conclude(), NOT_ASKED))
            .isEqualTo(TransportSelector.Transport.TCP);
    }

    @Test
    void shouldRefuseRdmaWhenItIsNotAvailable()
    {
        final DaemonContext context = new DaemonContext().protocol("rdma").conclude();

        assertThatThrownBy(() -> TransportSelector.select(context,
            () -> Availability.unavailable(Verbs.LIBRARY, "no RDMA devices (libibverbs.so.1 loaded, 0 devices)")))
            .isInstanceOf(ConfigException.class)
            .hasMessage("protocol rdma requested but RDMA is not available: no RDMA devices (libibverbs.so.1 " +
                "loaded, 0 devices) (set protocol to tcp, or protocol_fallback to tcp to serve TCP when RDMA " +
                "cannot be used; xferd never falls back silently)");
    }

    @Test
    void shouldSelectRdmaWhenItIsAvailable()
    {
        final DaemonContext context = new DaemonContext().protocol("rdma").conclude();

        assertThat(TransportSelector.select(context, () -> Availability.available(Verbs.LIBRARY)))
            .isEqualTo(TransportSelector.Transport.RDMA);
    }

    @Test
    void shouldServeTcpWhenRdmaIsNotAvailableOnlyIfTheFallbackIsNamed()
    {
        final DaemonContext context = new DaemonContext().protocol("rdma").protocolFallback("tcp").conclude();

        assertThat(TransportSelector.select(context, () -> Availability.unavailable(Verbs.LIBRARY, "no devices")))
            .isEqualTo(TransportSelector.Transport.TCP);
        assertThat(TransportSelector.select(context, () -> Availability.available(Verbs.LIBRARY)))
            .isEqualTo(TransportSelector.Transport.RDMA);
    }

    @Test
    void shouldRefuseUnopenableDevicesWithoutTheFallbackAndServeTcpWithIt()
    {
        final DaemonContext strict = new DaemonContext().protocol("rdma").conclude();
        final DaemonContext lenient = new DaemonContext().protocol("rdma").protocolFallback("tcp").conclude();

        assertThatThrownBy(() -> TransportSelector.fallbackOrRefuse(strict, "its devices cannot be opened: x"))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith("protocol rdma requested but its devices cannot be opened: x (set protocol");
        assertThat(TransportSelector.fallbackOrRefuse(lenient, "its devices cannot be opened: x"))
            .isEqualTo(TransportSelector.Transport.TCP);
    }

    @Test
    void shouldRejectAnUnknownFallbackOrGidIndex()
    {
        assertThatThrownBy(() -> new DaemonContext().protocolFallback("udp").conclude())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("protocol fallback must be none or tcp: udp");
        assertThatThrownBy(() -> new DaemonContext().gidIndex(256).conclude())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("gid index must be auto or 0..255: 256");
    }

    @Test
    void shouldRefuseRdmaOnThisHostWithTheProbesReason()
    {
        final Availability here = Verbs.availability();
        org.junit.jupiter.api.Assumptions.assumeFalse(here.isAvailable(), "this host has RDMA devices");
        final DaemonContext context = new DaemonContext().protocol("rdma").conclude();

        assertThatThrownBy(() -> TransportSelector.select(context, Verbs::availability))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining(here.reason());
    }

    @Test
    void shouldServeEveryMetadataBackendEvenOneThatIsDownAtStart()
    {
        for (final String server : new String[] {"etcd://10.0.0.1:2379", "redis://127.0.0.1:1", "http://h:1/m"})
        {
            assertThat(TransportSelector.select(new DaemonContext().metadataServer(server).conclude(), NOT_ASKED))
                .isEqualTo(TransportSelector.Transport.TCP);
        }
    }
}
