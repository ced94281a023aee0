package io.xferd.daemon.host;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaRuntime;
import io.xferd.topology.GpuInfo;
import io.xferd.topology.GpuVendor;
import io.xferd.topology.HostTopology;
import io.xferd.topology.PciePath;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

class GpuOrdinalsTest
{
    private static final HostTopology HOST = new HostTopology(List.of(), List.of(), List.of(
        new GpuInfo(GpuVendor.NVIDIA, 0, "0000:10:00.0", 0, PciePath.NONE),
        new GpuInfo(GpuVendor.NVIDIA, 1, "0000:9a:00.0", 1, PciePath.NONE),
        new GpuInfo(GpuVendor.AMD, 0, "0000:c1:00.0", 0, PciePath.NONE)));

    @Test
    void theCudaRuntimesOrdinalsNumberTheNvidiaGpus()
    {
        final HostTopology numbered = GpuOrdinals.apply(HOST, devices(Availability.available("libcudart"),
            "00000000:9A:00.0", "00000000:10:00.0"));

        assertThat(numbered.gpus()).extracting(GpuInfo::location, GpuInfo::pciAddress).containsExactly(
            org.assertj.core.groups.Tuple.tuple("cuda:0", "0000:9a:00.0"),
            org.assertj.core.groups.Tuple.tuple("cuda:1", "0000:10:00.0"),
            org.assertj.core.groups.Tuple.tuple("hip:0", "0000:c1:00.0"));
    }

    @Test
    void withoutARuntimeThePciOrderStays()
    {
        assertThat(GpuOrdinals.apply(HOST, devices(Availability.unavailable("libcudart", "not installed"))))
            .isSameAs(HOST);
    }

    @Test
    void aFailingRuntimeLeavesThePciOrder()
    {
        final GpuOrdinals.CudaDevices failing = new GpuOrdinals.CudaDevices()
        {
            public Availability availability()
            {
                return Availability.available("libcudart");
            }

            public int count()
            {
                return 2;
            }

            public String pciBusId(final int ordinal)
            {
                throw new IllegalStateException("cudaErrorInitializationError");
            }
        };
        assertThat(GpuOrdinals.apply(HOST, failing)).isSameAs(HOST);
    }

    @Test
    void theRealRuntimeIsNotAskedWhereItIsAbsent()
    {
        assumeThat(CudaRuntime.availability().isAvailable()).as("this host has CUDA").isFalse();
        assertThat(GpuOrdinals.apply(HOST, GpuOrdinals.RUNTIME)).isSameAs(HOST);
    }

    private static GpuOrdinals.CudaDevices devices(final Availability availability, final String... busIds)
    {
        return new GpuOrdinals.CudaDevices()
        {
            public Availability availability()
            {
                return availability;
            }

            public int count()
            {
                return busIds.length;
            }

            public String pciBusId(final int ordinal)
            {
                return busIds[ordinal];
            }
        };
    }
}
