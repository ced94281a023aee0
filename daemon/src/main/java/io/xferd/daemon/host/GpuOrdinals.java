package io.xferd.daemon.host;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaRuntime;
import io.xferd.topology.GpuInfo;
import io.xferd.topology.GpuVendor;
import io.xferd.topology.HostTopology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * Numbers the host's NVIDIA GPUs as the CUDA runtime does, so that the {@code cuda:N} a client names is the
 * GPU the topology matrix means: sysfs gives PCI order, CUDA's default order is fastest first. Without a usable
 * runtime the PCI order stays, which is CUDA's order under {@code CUDA_DEVICE_ORDER=PCI_BUS_ID}.
 */
public final class GpuOrdinals
{
    private static final Logger LOG = LoggerFactory.getLogger(GpuOrdinals.class);

    /** The runtime's view of its devices: {@code cudaGetDeviceCount} and {@code cudaDeviceGetPCIBusId}. */
    public interface CudaDevices
    {
        Availability availability();

        int count();

        String pciBusId(int ordinal);
    }

    public static final CudaDevices RUNTIME = new CudaDevices()
    {
        public Availability availability()
        {
            return CudaRuntime.availability();
        }

        public int count()
        {
            return CudaRuntime.deviceCount();
        }

        public String pciBusId(final int ordinal)
        {
            return CudaRuntime.pciBusId(ordinal);
        }
    };

    private GpuOrdinals()
    {
    }

    /**
     * @return {@code host} with its NVIDIA GPUs numbered by {@code cuda}; {@code host} itself when it has none,
     * or the runtime is not available or fails (said in the log).
     */
    public static HostTopology apply(final HostTopology host, final CudaDevices cuda)
    {
        if (host.gpus().stream().noneMatch(gpu -> gpu.vendor() == GpuVendor.NVIDIA))
        {
            return host;
        }
        final Availability availability = cuda.availability();
        if (!availability.isAvailable())
        {
            LOG.info("NVIDIA GPUs numbered in PCI order (CUDA_DEVICE_ORDER=PCI_BUS_ID): {}", availability.reason());
            return host;
        }
        try
        {
            final Map<String, Integer> ordinals = new HashMap<>();
            for (int ordinal = 0, count = cuda.count(); ordinal < count; ordinal++)
            {
                ordinals.put(cuda.pciBusId(ordinal), ordinal);
            }
            final HostTopology numbered = host.withGpuOrdinals(GpuVendor.NVIDIA, ordinals);
            for (final GpuInfo gpu : numbered.gpus())
            {
                LOG.debug("{} is {}", gpu.location(), gpu.pciAddress());
            }
            return numbered;
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("NVIDIA GPUs numbered in PCI order: asking the CUDA runtime failed: {}", ex.toString());
            return host;
        }
    }
}
