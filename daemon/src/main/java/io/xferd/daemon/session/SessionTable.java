package io.xferd.daemon.session;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The connected clients by slot (read by the data plane, lock-free) and by segment name (read by peer threads).
 * Only the conductor thread adds or removes.
 */
public final class SessionTable
{
    private final AtomicReferenceArray<ClientSession> bySlot;
    private final int[] generations;
    private final Map<String, ClientSession> byName = new ConcurrentHashMap<>();
    /** One past the highest slot in use: the data plane's scans stop there (one client: one slot, not all 128). */
    private volatile int slotsInUse;

    public SessionTable(final int maxClients)
    {
        bySlot = new AtomicReferenceArray<>(maxClients);
        generations = new int[maxClients];
    }

    /**
     * @return a free slot or -1 when full. Conductor thread only.
     */
    public int freeSlot()
    {
        for (int i = 0; i < bySlot.length(); i++)
        {
            if (bySlot.get(i) == null)
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * @return the generation the next session in this slot gets.
     */
    public int nextGeneration(final int slot)
    {
        generations[slot] = generations[slot] == Integer.MAX_VALUE ? 1 : generations[slot] + 1;
        return generations[slot];
    }

    public void add(final ClientSession session)
    {
        bySlot.set(session.slot(), session);
        byName.put(session.segmentName(), session);
        if (session.slot() >= slotsInUse)
        {
            slotsInUse = session.slot() + 1; // after the slot's store: a scan that sees the bound sees the session
        }
    }

    public void remove(final ClientSession session)
    {
        bySlot.compareAndSet(session.slot(), session, null);
        byName.remove(session.segmentName(), session);
        int bound = slotsInUse;
        while (bound > 0 && bySlot.get(bound - 1) == null)
        {
            bound--;
        }
        slotsInUse = bound;
    }

    /**
     * @return the number of slots (the most clients at once).
     */
    public int capacity()
    {
        return bySlot.length();
    }

    /**
     * @return one past the highest slot a session was in when last added or removed: slots from here on are empty
     * (a scan that read it before an add misses that session until its next look). Any thread.
     */
    public int slotsInUse()
    {
        return slotsInUse;
    }

    /**
     * @return the session in a slot, or null. Any thread.
     */
    public ClientSession inSlot(final int slot)
    {
        return bySlot.get(slot);
    }

    /**
     * @return true while some connected client has bytes in its submit ring the daemon has not consumed.
     */
    public boolean anySubmitBacklog()
    {
        for (int i = 0; i < bySlot.length(); i++)
        {
            final ClientSession session = bySlot.get(i);
            if (session != null && !session.isClosed() && session.submitRing().hasBacklog())
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the open segment a handle names, else null. Any thread.
     */
    public ClientSession segment(final long handle)
    {
        final int slot = SegmentHandles.slot(handle);
        if (slot < 0 || slot >= bySlot.length())
        {
            return null;
        }
        final ClientSession session = bySlot.get(slot);
        return session != null && session.generation() == SegmentHandles.generation(handle) ? session : null;
    }

    public ClientSession byName(final String segmentName)
    {
        return byName.get(segmentName);
    }

    public int size()
    {
        return byName.size();
    }

    public Iterable<ClientSession> sessions()
    {
        return byName.values();
    }
}
