package io.xferd.daemon.rdma;

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
    final int journalNicId;
    final AtomicCounter bytes;
    final AtomicCounter failures;
    int nextQp;

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
        this.journalNicId = journalNicId;
    }

    /**
     * @return a QP with room for one more work request, round robin, or -1 when all are full.
     */
    int qpWithCredit(final int maxOutstanding)
    {
        for (int i = 0; i < qps.length; i++)
        {
            final int qp = (nextQp + i) % qps.length;
            if (outstanding[qp] < maxOutstanding)
            {
                nextQp = qp + 1;
                return qp;
            }
        }
        return -1;
    }

    @Override
    public String toString()
    {
        return localNic + "->" + peerNic + " x" + qps.length;
    }
}
