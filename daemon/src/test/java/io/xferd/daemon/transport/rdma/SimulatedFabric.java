package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.verbs.Gid;
import org.agrona.collections.Int2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A simulated RDMA fabric for tests, NOT RDMA: devices of two in-process transports whose "work requests" copy
 * bytes between the registered mappings at post time and queue a completion on the poster's device. It enforces
 * what a NIC would (a key belongs to its device, the range lies inside the registration, QPs are connected; an RC
 * QP whose work request failed, or that was aborted, is in ERR for good and flushes every later work request with
 * {@code IBV_WC_WR_FLUSH_ERR}) and injects faults: an error completion, lost completions, held completions, a
 * refused connect, every QP failing at once. Posting and
 * polling allocate nothing, so that tests can show the transport's data path does not either.
 */
final class SimulatedFabric
{
    private final Int2ObjectHashMap<Registration> registrations = new Int2ObjectHashMap<>();
    private final Int2ObjectHashMap<SimulatedQueuePair> queuePairs = new Int2ObjectHashMap<>();
    private int nextKey = 0x100;
    private int nextQpn = 0x10;
    private int failNextWith = -1;
    private boolean dropCompletions;
    private boolean holdCompletions;
    private String refuseConnect;
    private long posted;

    record Registration(SimulatedDevice device, MemorySegment mapping, long iova, boolean[] valid)
    {
        boolean covers(final long address, final long length)
        {
            return valid[0] && address >= iova && length <= mapping.byteSize() &&
                address - iova <= mapping.byteSize() - length;
        }
    }

    SimulatedDevice device(final String name)
    {
        return new SimulatedDevice(name);
    }

    /** The next posted work request completes with {@code status} and moves nothing. */
    synchronized void failNextWith(final int status)
    {
        failNextWith = status;
    }

    /** Work requests move their bytes but their completions never arrive. */
    synchronized void dropCompletions(final boolean drop)
    {
        dropCompletions = drop;
    }

    /** Completions wait until {@link #releaseCompletions()}. */
    synchronized void holdCompletions(final boolean hold)
    {
        holdCompletions = hold;
        if (!hold)
        {
            releaseCompletions();
        }
    }

    synchronized void releaseCompletions()
    {
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            while (!qp.held.isEmpty())
            {
                qp.device.cq.add(qp.held.wrId(), qp.held.status());
                qp.held.remove();
            }
        }
    }

    /** Every QP goes to ERR, as when the link or the peer's NIC fails: later work requests flush. */
    synchronized void breakAllQueuePairs()
    {
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            qp.errored = true;
        }
    }

    /** The QPs of {@code device} go to ERR, as when its port goes down. */
    synchronized void breakQueuePairsOf(final SimulatedDevice device)
    {
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            qp.errored |= qp.device == device;
        }
    }

    /** Held completions are released as failed with {@code status}, each QP in ERR. */
    synchronized void releaseCompletionsFailed(final int status)
    {
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            if (!qp.held.isEmpty())
            {
                qp.errored = true;
                qp.held.failAll(status);
            }
        }
        holdCompletions(false);
    }

    /** @return how many QPs are created and not yet destroyed, on every device. */
    synchronized int liveQueuePairs()
    {
        int live = 0;
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            live += qp.closed ? 0 : 1;
        }
        return live;
    }

    /** @return how many QPs of {@code device} are created and not yet destroyed. */
    synchronized int liveQueuePairsOf(final SimulatedDevice device)
    {
        int live = 0;
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            live += qp.device == device && !qp.closed ? 1 : 0;
        }
        return live;
    }

    /** @return how many QPs were destroyed after being moved to ERR (aborted) first. */
    synchronized int destroyedAfterAbort()
    {
        int destroyed = 0;
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            destroyed += qp.closed && qp.aborts > 0 ? 1 : 0;
        }
        return destroyed;
    }

    /** @return how many QPs were aborted (moved to ERR by the transport). */
    synchronized int abortedQueuePairs()
    {
        int aborted = 0;
        for (final SimulatedQueuePair qp : queuePairs.values())
        {
            aborted += qp.aborts;
        }
        return aborted;
    }

    synchronized long postedWorkRequests()
    {
        return posted;
    }

    /** Connecting any QP fails with {@code reason} (null: connect normally). */
    synchronized void refuseConnect(final String reason)
    {
        refuseConnect = reason;
    }

    final class SimulatedDevice implements RdmaDevice
    {
        final String name;
        final Completions cq = new Completions();
        final AtomicLong bytesCarried = new AtomicLong();
        final List<Integer> sendQueueDepths = new ArrayList<>();
        /** As the verbs device keeps it: every QP's send queue depth, reserved until it is destroyed. */
        final CompletionQueueBudget budget;
        int registered;

        SimulatedDevice(final String name)
        {
            this.name = name;
            this.budget = new CompletionQueueBudget(name, 8192);
        }

        @Override
        public String name()
        {
            return name;
        }

        @Override
        public RdmaMemoryKeys register(final MemorySegment mapping, final long iova)
        {
            synchronized (SimulatedFabric.this)
            {
                final int lkey = nextKey++;
                final int rkey = nextKey++;
                final Registration registration = new Registration(this, mapping, iova, new boolean[] {true});
                registrations.put(lkey, registration);
                registrations.put(rkey, registration);
                registered++;
                return new RdmaMemoryKeys()
                {
                    public int lkey()
                    {
                        return lkey;
                    }

                    public int rkey()
                    {
                        return rkey;
                    }

                    public void close()
                    {
                        synchronized (SimulatedFabric.this)
                        {
                            if (registration.valid[0])
                            {
                                registration.valid[0] = false;
                                registered--;
                            }
                        }
                    }
                };
            }
        }

        @Override
        public RdmaQueuePair createQueuePair(final int maxOutstanding)
        {
            synchronized (SimulatedFabric.this)
            {
                budget.reserve(maxOutstanding);
                final SimulatedQueuePair qp = new SimulatedQueuePair(this, nextQpn++, maxOutstanding);
                sendQueueDepths.add(maxOutstanding);
                queuePairs.put(qp.qpn, qp);
                return qp;
            }
        }

        @Override
        public int poll(final CompletionHandler handler)
        {
            int polled = 0;
            while (polled < 64)
            {
                final long wrId;
                final int status;
                synchronized (SimulatedFabric.this)
                {
                    if (cq.isEmpty())
                    {
                        break;
                    }
                    wrId = cq.wrId();
                    status = cq.status();
                    cq.remove();
                }
                handler.onCompletion(wrId, status, status == WorkCompletionStatus.SUCCESS ? 0 : 0x80 + status);
                polled++;
            }
            return polled;
        }

        int registrations()
        {
            synchronized (SimulatedFabric.this)
            {
                return registered;
            }
        }

        @Override
        public void close()
        {
        }
    }

    final class SimulatedQueuePair implements RdmaQueuePair
    {
        final SimulatedDevice device;
        final int qpn;
        final int sendQueueDepth;
        final Completions held = new Completions();
        SimulatedQueuePair peer;
        boolean closed;
        boolean errored;
        int aborts;

        SimulatedQueuePair(final SimulatedDevice device, final int qpn, final int sendQueueDepth)
        {
            this.device = device;
            this.qpn = qpn;
            this.sendQueueDepth = sendQueueDepth;
        }

        @Override
        public QpEndpoint local()
        {
            return new QpEndpoint(device.name, "?", 0, new Gid(0xfe80L << 48, qpn), qpn, qpn * 7 & 0xFFFFFF, 5);
        }

        @Override
        public void connect(final QpEndpoint remote)
        {
            synchronized (SimulatedFabric.this)
            {
                if (refuseConnect != null)
                {
                    throw new RdmaConnectException("qp " + qpn + " -> RTR failed: " + refuseConnect);
                }
                final SimulatedQueuePair other = queuePairs.get(remote.qpn());
                if (other == null || !other.device.name.equals(remote.nic()))
                {
                    throw new RdmaConnectException("no QP " + remote.qpn() + " on " + remote.nic());
                }
                peer = other;
            }
        }

        @Override
        public boolean post(
            final boolean read, final long wrId, final long localAddress, final int length, final int lkey,
            final long remoteAddress, final int rkey)
        {
            synchronized (SimulatedFabric.this)
            {
                if (peer == null || closed)
                {
                    return false;
                }
                posted++;
                int status = WorkCompletionStatus.SUCCESS;
                final Registration local = registrations.get(lkey);
                final Registration remote = registrations.get(rkey);
                if (errored)
                {
                    status = WorkCompletionStatus.WR_FLUSH_ERR;
                }
                else if (peer.closed)
                {
                    status = WorkCompletionStatus.RETRY_EXC_ERR; // no QP answers at the other end any more
                }
                else if (failNextWith >= 0)
                {
                    status = failNextWith;
                    failNextWith = -1;
                }
                else if (local == null || local.device != device || !local.covers(localAddress, length))
                {
                    status = WorkCompletionStatus.LOC_PROT_ERR;
                }
                else if (remote == null || remote.device != peer.device || !remote.covers(remoteAddress, length))
                {
                    status = WorkCompletionStatus.REM_ACCESS_ERR;
                }
                else
                {
                    final long localOffset = localAddress - local.iova;
                    final long remoteOffset = remoteAddress - remote.iova;
                    if (read)
                    {
                        MemorySegment.copy(remote.mapping, remoteOffset, local.mapping, localOffset, length);
                    }
                    else
                    {
                        MemorySegment.copy(local.mapping, localOffset, remote.mapping, remoteOffset, length);
                    }
                    device.bytesCarried.addAndGet(length);
                }
                errored |= status != WorkCompletionStatus.SUCCESS;
                if (!dropCompletions)
                {
                    (holdCompletions ? held : device.cq).add(wrId, status);
                }
                return true;
            }
        }

        @Override
        public void abort()
        {
            synchronized (SimulatedFabric.this)
            {
                errored = true;
                aborts++;
                held.failAll(WorkCompletionStatus.WR_FLUSH_ERR); // what the NIC had not completed is flushed
            }
        }

        @Override
        public void close()
        {
            synchronized (SimulatedFabric.this)
            {
                if (!closed)
                {
                    closed = true;
                    device.budget.release(sendQueueDepth);
                }
            }
        }
    }

    /**
     * A completion queue without allocation: a ring of (wr_id, status).
     */
    static final class Completions
    {
        private final long[] wrIds = new long[1 << 16];
        private final int[] statuses = new int[1 << 16];
        private long head;
        private long tail;

        void add(final long wrId, final int status)
        {
            if (tail - head == wrIds.length)
            {
                throw new IllegalStateException("simulated completion queue overrun");
            }
            wrIds[(int)(tail & (wrIds.length - 1))] = wrId;
            statuses[(int)(tail & (wrIds.length - 1))] = status;
            tail++;
        }

        boolean isEmpty()
        {
            return head == tail;
        }

        long wrId()
        {
            return wrIds[(int)(head & (wrIds.length - 1))];
        }

        int status()
        {
            return statuses[(int)(head & (wrIds.length - 1))];
        }

        void remove()
        {
            head++;
        }

        /** Every queued completion not already failed now reports {@code status}. */
        void failAll(final int status)
        {
            for (long i = head; i < tail; i++)
            {
                final int index = (int)(i & (wrIds.length - 1));
                if (statuses[index] == WorkCompletionStatus.SUCCESS)
                {
                    statuses[index] = status;
                }
            }
        }
    }
}
