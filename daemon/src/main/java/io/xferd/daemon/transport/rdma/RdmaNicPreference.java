package io.xferd.daemon.transport.rdma;

import io.xferd.topology.HostTopology;
import io.xferd.topology.TopologyMatrix;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Function;

/**
 * Which of the daemon's RDMA devices a memory location ("cpu:0", "cuda:1") prefers: the topology matrix (the
 * configured file, else the discovered one) filtered to the devices in use; every device when there is none or
 * it names none of them.
 */
public final class RdmaNicPreference implements Function<String, List<String>>
{
    private static final Logger LOG = LoggerFactory.getLogger(RdmaNicPreference.class);

    private final TopologyMatrix matrix;
    private final List<String> all;

    RdmaNicPreference(final TopologyMatrix matrix, final List<String> devices)
    {
        this.matrix = matrix;
        this.all = List.copyOf(devices);
    }

    public static RdmaNicPreference of(final List<String> devices, final Path matrixFile)
    {
        TopologyMatrix matrix = null;
        try
        {
            matrix = (matrixFile != null ? TopologyMatrix.fromFile(matrixFile) :
                TopologyMatrix.build(HostTopology.discover())).filter(new LinkedHashSet<>(devices));
            if (matrix.nics().isEmpty())
            {
                matrix = null;
            }
        }
        catch (final java.io.IOException | RuntimeException ex)
        {
            LOG.info("no topology matrix for RDMA devices {} ({}): every device is preferred for all memory",
                devices, ex.getMessage());
        }
        return new RdmaNicPreference(matrix, devices);
    }

    @Override
    public List<String> apply(final String location)
    {
        if (matrix == null)
        {
            return all;
        }
        final var row = matrix.row(location);
        final List<String> preferred = row == null ? null : row.preferred();
        return preferred == null || preferred.isEmpty() ? all : preferred;
    }
}
