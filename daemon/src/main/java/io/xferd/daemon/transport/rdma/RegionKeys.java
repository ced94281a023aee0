package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.memory.Region;

import java.util.ArrayList;
import java.util.List;

/**
 * One region's registrations, one per device in {@link RdmaDevices} order: the keys the data path reads and the
 * arrays a descriptor publishes.
 */
public final class RegionKeys
{
    private final Region region;
    private final RdmaMemoryKeys[] registrations;
    private final int[] lkeys;
    private final int[] rkeys;

    RegionKeys(final Region region, final RdmaMemoryKeys[] registrations)
    {
        this.region = region;
        this.registrations = registrations;
        this.lkeys = new int[registrations.length];
        this.rkeys = new int[registrations.length];
        for (int i = 0; i < registrations.length; i++)
        {
            lkeys[i] = registrations[i].lkey();
            rkeys[i] = registrations[i].rkey();
        }
    }

    public Region region()
    {
        return region;
    }

    public int lkey(final int device)
    {
        return lkeys[device];
    }

    public int rkey(final int device)
    {
        return rkeys[device];
    }

    public List<Long> lkeyList()
    {
        return unsigned(lkeys);
    }

    public List<Long> rkeyList()
    {
        return unsigned(rkeys);
    }

    void deregister()
    {
        for (final RdmaMemoryKeys registration : registrations)
        {
            registration.close();
        }
    }

    private static List<Long> unsigned(final int[] keys)
    {
        final List<Long> list = new ArrayList<>(keys.length);
        for (final int key : keys)
        {
            list.add(Integer.toUnsignedLong(key));
        }
        return list;
    }
}
