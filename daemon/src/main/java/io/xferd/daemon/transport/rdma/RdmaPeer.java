package io.xferd.daemon.transport.rdma;

import java.util.List;

/**
 * Another daemon as the RDMA transport reaches it: its RPC address and epoch, the device names its
 * descriptors' key arrays are indexed by, and the paths whose QPs are connected to it.
 */
final class RdmaPeer
{
    final String address;
    final long epoch;
    final List<String> devices;
    final RdmaPath[] paths;
    final int journalPeerId;

    RdmaPeer(
        final String address, final long epoch, final List<String> devices, final RdmaPath[] paths,
        final int journalPeerId)
    {
        this.address = address;
        this.epoch = epoch;
        this.devices = devices;
        this.paths = paths;
        this.journalPeerId = journalPeerId;
    }

    /**
     * @return a bit per path whose local NIC is in {@code preferred}; every path when none is (or no list).
     * Allocation-free.
     */
    long pathsFor(final List<String> preferred)
    {
        long mask = 0;
        if (preferred != null)
        {
            for (int i = 0; i < paths.length && i < 64; i++)
            {
                if (preferred.contains(paths[i].localNic))
                {
                    mask |= 1L << i;
                }
            }
        }
        return mask != 0 ? mask : paths.length >= 64 ? -1L : (1L << paths.length) - 1;
    }

    /**
     * @return whether any path still has a live QP; when none has, the peer must be connected anew. Any thread.
     */
    boolean isUsable()
    {
        for (final RdmaPath path : paths)
        {
            if (path.isLive())
            {
                return true;
            }
        }
        return false;
    }

    void close()
    {
        for (final RdmaPath path : paths)
        {
            for (final RdmaQueuePair qp : path.qps)
            {
                qp.close();
            }
            path.bytes.close();
            path.failures.close();
        }
    }

    @Override
    public String toString()
    {
        return address + " epoch " + epoch + " " + java.util.Arrays.toString(paths);
    }
}
