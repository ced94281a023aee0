package io.xferd.daemon.journal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Peer and NIC names by id: interned on the control plane, looked up by the journal agent and the metrics.
 * Ids are dense from 0; {@link TransferJournal#PEER_LOCAL} and {@link TransferJournal#NIC_SHM} are always there.
 */
public final class JournalNames
{
    public static final String LOCAL = "local";
    public static final String SHM = "shm";

    private final Map<String, Integer> ids = new HashMap<>();
    private volatile List<String> names = List.of();

    public JournalNames()
    {
        intern(LOCAL);
        intern(SHM);
    }

    static int wellKnownId(final String name)
    {
        return SHM.equals(name) ? TransferJournal.NIC_SHM : TransferJournal.PEER_LOCAL;
    }

    /**
     * @return the id of a name, assigning the next one when new. Any thread; allocates.
     */
    public synchronized int intern(final String name)
    {
        final Integer existing = ids.get(name);
        if (existing != null)
        {
            return existing;
        }
        final int id = ids.size();
        ids.put(name, id);
        final List<String> copy = new ArrayList<>(names);
        copy.add(name);
        names = List.copyOf(copy);
        return id;
    }

    /**
     * @return the name of an id, or "#id" when unknown.
     */
    public String name(final int id)
    {
        final List<String> snapshot = names;
        return id >= 0 && id < snapshot.size() ? snapshot.get(id) : "#" + id;
    }

    public int size()
    {
        return names.size();
    }

    public List<String> all()
    {
        return names;
    }
}
