package io.xferd.nativebindings.verbs;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One RDMA device from {@code ibv_get_device_list}: its name (e.g. {@code mlx5_0}) and node GUID, and the way to
 * open it. Valid while the {@link VerbsDeviceList} it came from is open.
 */
public final class VerbsDevice
{
    private final MemorySegment device;
    private final String name;
    private final long guid;

    VerbsDevice(final MemorySegment device, final String name, final long guid)
    {
        this.device = device;
        this.name = name;
        this.guid = guid;
    }

    /**
     * Lists this host's RDMA devices. A host without libibverbs, or whose kernel exposes no uverbs devices, gets an
     * empty list, never an exception; {@link Verbs#availability()} says why.
     *
     * @return the list, to be closed ({@code ibv_free_device_list}) after opening the devices wanted.
     */
    public static VerbsDeviceList list()
    {
        return VerbsDeviceList.open();
    }

    /**
     * @return the names of this host's RDMA devices; empty when there are none or libibverbs is absent.
     */
    public static List<String> names()
    {
        try (VerbsDeviceList list = list())
        {
            final List<String> names = new ArrayList<>(list.devices().size());
            for (final VerbsDevice device : list.devices())
            {
                names.add(device.name());
            }
            return names;
        }
    }

    public String name()
    {
        return name;
    }

    /**
     * @return the node GUID in host order (the library returns it big-endian).
     */
    public long guid()
    {
        return guid;
    }

    /**
     * {@code ibv_open_device}.
     */
    public VerbsContext open()
    {
        return VerbsContext.open(this);
    }

    MemorySegment pointer()
    {
        return device;
    }

    @Override
    public String toString()
    {
        return name + String.format(" guid=%016x", guid);
    }
}
