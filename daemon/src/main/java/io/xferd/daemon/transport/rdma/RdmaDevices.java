package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.verbs.VerbsDevice;
import io.xferd.nativebindings.verbs.VerbsDeviceList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Function;

/**
 * The RDMA devices this daemon serves with, in a fixed order: the order of the {@code lkey}/{@code rkey} arrays
 * it publishes and of the {@code devices} list in its descriptors.
 */
public final class RdmaDevices implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(RdmaDevices.class);

    private final List<RdmaDevice> devices;
    private final List<String> names;

    public RdmaDevices(final List<RdmaDevice> devices)
    {
        if (devices.isEmpty())
        {
            throw new IllegalArgumentException("no RDMA devices to serve with");
        }
        this.devices = List.copyOf(devices);
        this.names = devices.stream().map(RdmaDevice::name).toList();
    }

    /**
     * Open the devices {@code device_name} lists (Mooncake-style names, e.g. {@code mlx5_0}), or every usable
     * device of the host when the list is empty.
     *
     * @param gidIndex a GID index, or {@link GidIndexSelector#AUTO}.
     * @throws IllegalArgumentException naming a listed device the host lacks, or when there are none.
     */
    public static RdmaDevices open(final List<String> deviceNames, final int gidIndex)
    {
        try (VerbsDeviceList list = VerbsDevice.list())
        {
            final List<String> present = list.devices().stream().map(VerbsDevice::name).toList();
            return open(deviceNames, present, name -> new VerbsRdmaDevice(
                list.devices().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow().open(), gidIndex));
        }
    }

    /**
     * Open {@code deviceNames}, each of which must be present and usable; or, when it is empty, every present
     * device that opens, skipping (and logging) the rest: a host's unused NICs often have no active port.
     *
     * @param opener opens one device by name.
     */
    static RdmaDevices open(
        final List<String> deviceNames, final List<String> present, final Function<String, RdmaDevice> opener)
    {
        final boolean listed = !deviceNames.isEmpty();
        final List<String> wanted = listed ? List.copyOf(new LinkedHashSet<>(deviceNames)) : present;
        final List<RdmaDevice> opened = new ArrayList<>();
        final List<String> skipped = new ArrayList<>();
        try
        {
            for (final String name : wanted)
            {
                if (!present.contains(name))
                {
                    throw new IllegalArgumentException("device_name lists RDMA device " + name +
                        ", which this host does not have (it has " + (present.isEmpty() ? "none" : present) + ")");
                }
                try
                {
                    opened.add(opener.apply(name));
                }
                catch (final RuntimeException ex)
                {
                    if (listed)
                    {
                        throw ex;
                    }
                    LOG.warn("RDMA device {} not used: {}", name, ex.getMessage());
                    skipped.add(name + " (" + ex.getMessage() + ")");
                }
            }
            if (opened.isEmpty())
            {
                throw new IllegalArgumentException("no usable RDMA device" +
                    (skipped.isEmpty() ? "" : ": " + String.join(", ", skipped)));
            }
            return new RdmaDevices(opened);
        }
        catch (final RuntimeException ex)
        {
            opened.forEach(RdmaDevice::close);
            throw ex;
        }
    }

    public int size()
    {
        return devices.size();
    }

    public RdmaDevice get(final int index)
    {
        return devices.get(index);
    }

    public List<String> names()
    {
        return names;
    }

    @Override
    public void close()
    {
        devices.forEach(RdmaDevice::close);
    }

    @Override
    public String toString()
    {
        return devices.toString();
    }
}
