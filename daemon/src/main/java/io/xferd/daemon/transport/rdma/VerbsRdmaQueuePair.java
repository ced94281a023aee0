package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.verbs.QueuePair;
import io.xferd.nativebindings.verbs.VerbsLayouts;

import java.util.concurrent.ThreadLocalRandom;

/**
 * {@link RdmaQueuePair} on a libibverbs RC queue pair.
 */
final class VerbsRdmaQueuePair implements RdmaQueuePair
{
    private final VerbsRdmaDevice device;
    private final QueuePair qp;
    private final QpEndpoint local;
    private final int maxRdAtomic;
    private final Runnable onClose;
    private boolean closed;

    /**
     * @param onClose run once the QP is destroyed (gives its send queue's share of the CQ back).
     */
    VerbsRdmaQueuePair(
        final VerbsRdmaDevice device, final QueuePair qp, final int lid, final int mtu, final int maxRdAtomic,
        final Runnable onClose)
    {
        this.device = device;
        this.qp = qp;
        this.maxRdAtomic = maxRdAtomic;
        this.onClose = onClose;
        this.local = new QpEndpoint(device.name(), "?", lid, device.gid(), qp.qpNum(),
            ThreadLocalRandom.current().nextInt() & 0xFFFFFF, mtu);
    }

    @Override
    public QpEndpoint local()
    {
        return local;
    }

    @Override
    public void connect(final QpEndpoint remote)
    {
        String state = "INIT";
        try
        {
            qp.toInit(device.port(), RdmaDevice.ACCESS);
            state = "RTR";
            qp.toReadyToReceive(remote.toVerbs(), device.port(), device.gidIndex(), Math.min(local.mtu(), remote.mtu()),
                maxRdAtomic);
            state = "RTS";
            qp.toReadyToSend(local.psn(), maxRdAtomic);
        }
        catch (final RuntimeException ex)
        {
            throw new RdmaConnectException("qp " + local.qpn() + " on " + device.name() + " -> " + state +
                " towards " + remote.nic() + " qp " + remote.qpn() + " failed: " + ex.getMessage(), ex);
        }
    }

    @Override
    public boolean post(
        final boolean read, final long wrId, final long localAddress, final int length, final int lkey,
        final long remoteAddress, final int rkey)
    {
        try
        {
            qp.postRdma(read ? VerbsLayouts.IBV_WR_RDMA_READ : VerbsLayouts.IBV_WR_RDMA_WRITE, wrId,
                VerbsLayouts.IBV_SEND_SIGNALED, localAddress, length, lkey, remoteAddress, rkey);
            return true;
        }
        catch (final NativeException ex)
        {
            return false;
        }
    }

    @Override
    public void abort()
    {
        try
        {
            qp.toError();
        }
        catch (final RuntimeException ex)
        {
            // nothing better to do: the QP is abandoned either way and destroyed with its peer
        }
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try
        {
            qp.close();
        }
        finally
        {
            onClose.run();
        }
    }
}
