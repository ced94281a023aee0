package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.verbs.CompletionQueue;
import io.xferd.nativebindings.verbs.DeviceAttributes;
import io.xferd.nativebindings.verbs.Gid;
import io.xferd.nativebindings.verbs.MemoryRegion;
import io.xferd.nativebindings.verbs.PortAttributes;
import io.xferd.nativebindings.verbs.ProtectionDomain;
import io.xferd.nativebindings.verbs.VerbsContext;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * {@link RdmaDevice} on libibverbs: one open device, its first active port, one protection domain and one
 * completion queue that every QP of the device shares. Not exercised on a host without RDMA devices.
 */
public final class VerbsRdmaDevice implements RdmaDevice
{
    /**
     * Shared by every QP of the device (at most the device's max_cqe): 128 send queues of 2 x 64, twice that on
     * mlx5, which rounds up. Its buffer is pinned (RLIMIT_MEMLOCK): 2 MiB of 64-byte CQEs on mlx5.
     */
    static final int CQ_ENTRIES = 16 * 1024;
    static final int POLL_BATCH = 64;
    static final Path SYSFS = Path.of("/sys/class/infiniband");

    private final VerbsContext context;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final int port;
    private final PortAttributes portAttributes;
    private final int gidIndex;
    private final Gid gid;
    private final int maxRdAtomic;
    private final int maxQpWr;
    private final CompletionQueueBudget cqBudget;

    /**
     * Takes ownership of {@code context} (closed with this device, or here when set-up fails).
     *
     * @param gidIndex the configured GID index, or {@link GidIndexSelector#AUTO}.
     */
    public VerbsRdmaDevice(final VerbsContext context, final int gidIndex)
    {
        this.context = context;
        ProtectionDomain pd = null;
        try
        {
            final DeviceAttributes attributes = context.queryDevice();
            int activePort = -1;
            PortAttributes portAttributes = null;
            for (int p = 1; p <= attributes.physicalPortCount() && activePort < 0; p++)
            {
                final PortAttributes candidate = context.queryPort(p);
                if (candidate.isActive())
                {
                    activePort = p;
                    portAttributes = candidate;
                }
            }
            if (activePort < 0)
            {
                throw new IllegalStateException("RDMA device " + context.deviceName() + " has no active port");
            }
            this.port = activePort;
            this.portAttributes = portAttributes;
            this.gidIndex = gidIndex == GidIndexSelector.AUTO ? GidIndexSelector.select(SYSFS, context.deviceName(),
                port, portAttributes.gidTableLength(), portAttributes.isEthernet()) : gidIndex;
            this.gid = context.queryGid(port, this.gidIndex);
            if (portAttributes.isEthernet() && gid.isZero())
            {
                // peers would connect without a GRH, which RoCE refuses (or route nowhere): say so here
                throw new IllegalStateException("RDMA device " + context.deviceName() + " port " + port +
                    " has no GID at index " + this.gidIndex + "; RoCE addresses QPs by GID (see show_gids, gid_index)");
            }
            this.maxRdAtomic = Math.max(1, Math.min(16,
                Math.min(attributes.maxQpRdAtom(), attributes.maxQpInitRdAtom())));
            this.maxQpWr = attributes.maxQpWr();
            pd = context.allocateProtectionDomain();
            this.pd = pd;
            this.cq = context.createCompletionQueue(Math.min(CQ_ENTRIES, attributes.maxCqe()), POLL_BATCH);
            this.cqBudget = new CompletionQueueBudget(context.deviceName(), cq.capacity());
        }
        catch (final RuntimeException ex)
        {
            if (pd != null)
            {
                pd.close();
            }
            context.close();
            throw ex;
        }
    }

    @Override
    public String name()
    {
        return context.deviceName();
    }

    public int port()
    {
        return port;
    }

    public int gidIndex()
    {
        return gidIndex;
    }

    public Gid gid()
    {
        return gid;
    }

    @Override
    public RdmaMemoryKeys register(final MemorySegment mapping, final long iova)
    {
        final MemoryRegion region = pd.register(mapping.address(), mapping.byteSize(), iova, ACCESS);
        return new RdmaMemoryKeys()
        {
            public int lkey()
            {
                return region.lkey();
            }

            public int rkey()
            {
                return region.rkey();
            }

            public void close()
            {
                region.close();
            }
        };
    }

    @Override
    public RdmaQueuePair createQueuePair(final int maxOutstanding)
    {
        if (maxOutstanding > maxQpWr)
        {
            throw new RdmaConnectException("RDMA device " + name() + " allows " + maxQpWr +
                " work requests per QP, " + maxOutstanding + " asked for");
        }
        cqBudget.reserve(maxOutstanding);
        try
        {
            return new VerbsRdmaQueuePair(this, pd.createQueuePair(cq, cq, maxOutstanding, 1, 1),
                portAttributes.lid(), portAttributes.activeMtu(), maxRdAtomic, () -> cqBudget.release(maxOutstanding));
        }
        catch (final RuntimeException ex)
        {
            cqBudget.release(maxOutstanding);
            throw ex;
        }
    }

    @Override
    public int poll(final CompletionHandler handler)
    {
        final int polled = cq.poll();
        for (int i = 0; i < polled; i++)
        {
            handler.onCompletion(cq.wrId(i), cq.status(i), cq.vendorError(i));
        }
        return polled;
    }

    @Override
    public void close()
    {
        try
        {
            cq.close();
            pd.close();
        }
        finally
        {
            context.close();
        }
    }

    @Override
    public String toString()
    {
        return name() + " port " + port + " gid[" + gidIndex + "]=" + gid + (portAttributes.isEthernet() ?
            " (RoCE)" : " lid " + portAttributes.lid());
    }
}
