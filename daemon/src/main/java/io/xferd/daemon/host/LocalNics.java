package io.xferd.daemon.host;

import io.xferd.topology.HostTopology;
import io.xferd.topology.TopologyMatrix;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.Inet4Address;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The NICs this daemon stripes TCP slices over: the configured {@code device_name} list, each with its IPv4
 * address (slices leave through a NIC by binding the connection to its address), and the topology matrix that
 * says which NICs a memory location prefers. With no list configured there is one path, chosen by the OS's
 * routing, and no striping.
 */
public final class LocalNics
{
    private static final Logger LOG = LoggerFactory.getLogger(LocalNics.class);

    private final List<Nic> nics;
    private final TopologyMatrix matrix;

    /**
     * One NIC: its name and IPv4 address with prefix length.
     */
    public record Nic(String name, String address, int prefixLength)
    {
        public boolean sameSubnet(final String otherAddress)
        {
            return prefixLength > 0 && mask(address) == mask(otherAddress);
        }

        private int mask(final String dotted)
        {
            final String[] parts = dotted.split("\\.");
            int value = 0;
            for (final String part : parts)
            {
                value = value << 8 | Integer.parseInt(part);
            }
            return prefixLength == 32 ? value : value & ~((1 << (32 - prefixLength)) - 1);
        }
    }

    private LocalNics(final List<Nic> nics, final TopologyMatrix matrix)
    {
        this.nics = List.copyOf(nics);
        this.matrix = matrix;
    }

    /**
     * NICs as given, without looking at the host, every one preferred for all memory: for tests that need paths
     * this host does not have (a NIC whose address cannot be bound fails every connection made through it).
     */
    public static LocalNics of(final List<Nic> nics)
    {
        return new LocalNics(nics, null);
    }

    /**
     * @throws IllegalArgumentException naming a configured NIC this host lacks or that has no IPv4 address.
     */
    public static LocalNics resolve(final List<String> deviceNames)
    {
        return resolve(deviceNames, null);
    }

    /**
     * @param matrixFile a Mooncake-form matrix that replaces discovery, or null; without {@code deviceNames}
     *                   its NICs are the striping NICs.
     */
    public static LocalNics resolve(final List<String> deviceNames, final java.nio.file.Path matrixFile)
    {
        TopologyMatrix matrix = null;
        List<String> names = deviceNames;
        if (matrixFile != null)
        {
            try
            {
                matrix = TopologyMatrix.fromFile(matrixFile);
            }
            catch (final java.io.IOException | RuntimeException ex)
            {
                throw new IllegalArgumentException("topology matrix " + matrixFile + ": " + ex.getMessage(), ex);
            }
            if (names.isEmpty())
            {
                names = List.copyOf(matrix.nics());
            }
            else
            {
                matrix = matrix.filter(new LinkedHashSet<>(names));
            }
        }
        if (names.isEmpty())
        {
            return new LocalNics(List.of(), null);
        }
        final List<Nic> nics = new ArrayList<>();
        for (final String name : new LinkedHashSet<>(names))
        {
            nics.add(lookup(name));
        }
        return new LocalNics(nics, matrix != null ? matrix : matrixFor(names));
    }

    private static Nic lookup(final String name)
    {
        try
        {
            final NetworkInterface nic = NetworkInterface.getByName(name);
            if (nic == null)
            {
                throw new IllegalArgumentException("device_name lists " + name + ", which this host does not have");
            }
            for (final InterfaceAddress address : nic.getInterfaceAddresses())
            {
                if (address.getAddress() instanceof Inet4Address ipv4)
                {
                    return new Nic(name, ipv4.getHostAddress(), address.getNetworkPrefixLength());
                }
            }
            throw new IllegalArgumentException("NIC " + name + " has no IPv4 address for the TCP transport");
        }
        catch (final SocketException ex)
        {
            throw new IllegalArgumentException("cannot read NIC " + name + ": " + ex.getMessage(), ex);
        }
    }

    private static TopologyMatrix matrixFor(final List<String> deviceNames)
    {
        try
        {
            return TopologyMatrix.build(GpuOrdinals.apply(HostTopology.discover(), GpuOrdinals.RUNTIME))
                .filter(new LinkedHashSet<>(deviceNames));
        }
        catch (final RuntimeException ex)
        {
            LOG.info("no topology matrix for {} ({}): every listed NIC is preferred for all memory", deviceNames,
                ex.getMessage());
            return null;
        }
    }

    public List<Nic> nics()
    {
        return nics;
    }

    /**
     * @return the names of the NICs preferred for memory at {@code location} ("cpu:0", "cuda:1").
     */
    public List<String> preferred(final String location)
    {
        if (matrix == null)
        {
            return nics.stream().map(Nic::name).toList();
        }
        return matrix.preferred(location);
    }

    /**
     * @return the matrix in Mooncake's form for descriptors, or null without one.
     */
    public Map<String, List<List<String>>> matrixJson()
    {
        if (matrix == null)
        {
            return null;
        }
        final Map<String, List<List<String>>> json = new java.util.LinkedHashMap<>();
        for (final var entry : matrix.rows().entrySet())
        {
            json.put(entry.getKey(), List.of(entry.getValue().preferred(), entry.getValue().available()));
        }
        return json;
    }
}
