package io.xferd.daemon.rdma;

import io.xferd.nativebindings.verbs.VerbsDevice;
import io.xferd.nativebindings.verbs.VerbsDeviceList;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The RDMA devices this daemon serves with, in a fixed order: the order of the {@code lkey}/{@code rkey} arrays
 * it publishes and of the {@code devices} list in its descriptors.
 */
public final class RdmaDevices implements AutoCloseable
{
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
     * Open the devices {@code device_name} lists (Mooncake-style names, e.g. {@code mlx5_0}), or every device
     * of the host when the list is empty.
     *
     * @param gidIndex a GID index, or {@link GidIndexSelector#AUTO}.
     * @throws IllegalArgumentException naming a listed device the host lacks, or when there are none.
     */
    public static RdmaDevices open(final List<String> deviceNames, final int gidIndex)
    {
        final List<RdmaDevice> opened = new ArrayList<>();
        try (VerbsDeviceList list = VerbsDevice.list())
        {
            final List<String> present = list.devices().stream().map(VerbsDevice::name).toList();
            final List<String> wanted = deviceNames.isEmpty() ? present : List.copyOf(new LinkedHashSet<>(deviceNames));
            for (final String name : wanted)
            {
                final VerbsDevice device = list.devices().stream().filter(d -> d.name().equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("device_name lists RDMA device " + name +
                        ", which this host does not have (it has " + (present.isEmpty() ? "none" : present) + ")"));
                opened.add(new VerbsRdmaDevice(device.open(), gidIndex));
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
