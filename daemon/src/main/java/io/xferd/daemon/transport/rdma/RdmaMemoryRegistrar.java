package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Registers every region the daemon maps with every RDMA device (local write, remote read and write), under the
 * owner's address, and deregisters a region only once it is closed and no transfer borrows it any more: a
 * request holds its local region until its last completion, so no work request outlives its registration.
 * Registration and deregistration run on the conductor thread; {@link #keysOf(Region)} is the data path's
 * lock-free lookup.
 */
public final class RdmaMemoryRegistrar implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(RdmaMemoryRegistrar.class);

    private final RdmaDevices devices;
    private final Map<Region, RegionKeys> keys = new ConcurrentHashMap<>();
    private final List<RegionKeys> retiring = new ArrayList<>();

    public RdmaMemoryRegistrar(final RdmaDevices devices)
    {
        this.devices = devices;
    }

    /**
     * Register {@code region} on every device (idempotent).
     *
     * @throws RuntimeException from the device that refused; registrations already made are undone.
     */
    public synchronized RegionKeys register(final Region region)
    {
        final RegionKeys existing = keys.get(region);
        if (existing != null)
        {
            return existing;
        }
        final RdmaMemoryKeys[] registrations = new RdmaMemoryKeys[devices.size()];
        try
        {
            for (int i = 0; i < registrations.length; i++)
            {
                registrations[i] = devices.get(i).register(region.mapping(), region.ownerAddress());
            }
        }
        catch (final RuntimeException ex)
        {
            for (final RdmaMemoryKeys registration : registrations)
            {
                if (registration != null)
                {
                    registration.close();
                }
            }
            throw ex;
        }
        final RegionKeys regionKeys = new RegionKeys(region, registrations);
        keys.put(region, regionKeys);
        return regionKeys;
    }

    /**
     * @return the region's keys, or null when it is not registered. Allocation-free.
     */
    public RegionKeys keysOf(final Region region)
    {
        return keys.get(region);
    }

    /**
     * A segment's table changed: register what is new, retire what was closed.
     */
    public synchronized void sync(final RegionTable table)
    {
        for (int i = 0; i < table.size(); i++)
        {
            final Region region = table.get(i);
            // GPU memory has no host mapping to register (GPUDirect RDMA is not in this build), nor has a client's
            // process memory (the NIC can only register this process's pages)
            if (!region.isClosed() && region.isMapped() && !keys.containsKey(region))
            {
                try
                {
                    register(region);
                }
                catch (final RuntimeException ex)
                {
                    LOG.error("RDMA registration of {} failed; peers cannot reach it: {}", region, ex.getMessage());
                }
            }
        }
        retireClosed();
    }

    /**
     * Move every closed region's registrations to the retiring list (they stay valid for in-flight work).
     */
    public synchronized void retireClosed()
    {
        for (final RegionKeys regionKeys : keys.values())
        {
            if (regionKeys.region().isClosed() && !retiring.contains(regionKeys))
            {
                retiring.add(regionKeys);
            }
        }
    }

    /**
     * Deregister retiring regions that no transfer borrows any more. Allocation-free; call it every
     * housekeeping pass.
     *
     * @return how many were deregistered.
     */
    public synchronized int deregisterReclaimable()
    {
        int work = 0;
        for (int i = retiring.size() - 1; i >= 0; i--)
        {
            final RegionKeys regionKeys = retiring.get(i);
            if (regionKeys.region().isReclaimable())
            {
                retiring.remove(i);
                keys.remove(regionKeys.region());
                regionKeys.deregister();
                work++;
            }
        }
        return work;
    }

    public boolean isRegistered(final Region region)
    {
        return keys.containsKey(region);
    }

    public RdmaDevices devices()
    {
        return devices;
    }

    /**
     * Deregister everything (the daemon is stopping; the transport drained or failed what was in flight).
     */
    @Override
    public synchronized void close()
    {
        for (final RegionKeys regionKeys : keys.values())
        {
            regionKeys.deregister();
        }
        keys.clear();
        retiring.clear();
    }
}
