package io.xferd.daemon.transport.rdma;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * One (local device, peer device) pair of a peer: its connected QPs and how many signaled work requests each has
 * outstanding, and its bytes and failures as counters in the cnc file (labelled as TCP's paths are, so
 * {@code xferd status} lists both). Only the {@link RdmaAgent}'s thread posts or counts.
 */
final class RdmaPath
{
    final int localDevice;
    final String localNic;
    final int peerDevice;
    final String peerNic;
    final RdmaQueuePair[] qps;
    final int[] outstanding;
    /** QPs no longer posted to: an RC QP that completed a work request in error stays in ERR for good. */
    final boolean[] broken;
    final int journalNicId;
    final AtomicCounter bytes;
    final AtomicCounter failures;
    int nextQp;
    private volatile int liveQps;

    RdmaPath(
        final int localDevice, final String localNic, final int peerDevice, final String peerNic,
        final RdmaQueuePair[] qps, final int journalNicId, final AtomicCounter bytes, final AtomicCounter failures)
    {
        this.bytes = bytes;
        this.failures = failures;
        this.localDevice = localDevice;
        this.localNic = localNic;
        this.peerDevice = peerDevice;
        this.peerNic = peerNic;
        this.qps = qps;
        this.outstanding = new int[qps.length];
        this.broken = new boolean[qps.length];
        this.liveQps = qps.length;
        this.journalNicId = journalNicId;
    }

    /**
     * @return a live QP with room for one more work request, round robin, or -1 when all are full or broken.
     */
    int qpWithCredit(final int maxOutstanding)
    {
        for (int i = 0; i < qps.length; i++)
        {
            final int qp = (nextQp + i) % qps.length;
            if (!broken[qp] && outstanding[qp] < maxOutstanding)
            {
                nextQp = qp + 1;
                return qp;
            }
        }
        return -1;
    }

    /**
     * Stop posting to {@code qp}. Agent thread only.
     *
     * @return true the first time, false when it was already broken.
     */
    boolean markBroken(final int qp)
    {
        if (broken[qp])
        {
            return false;
        }
        broken[qp] = true;
        liveQps--;
        return true;
    }

    /**
     * @return whether any QP of the path can still be posted to; any thread.
     */
    boolean isLive()
    {
        return liveQps > 0;
    }

    @Override
    public String toString()
    {
        return localNic + "->" + peerNic + " x" + qps.length;
    }
}
