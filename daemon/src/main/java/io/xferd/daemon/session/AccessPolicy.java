package io.xferd.daemon.session;

import java.util.Arrays;

/**
 * Which local clients may reach a segment: the owner's own uid, root, and the uids and gids the operator granted
 * (config {@code allowed_uids}, {@code allowed_gids}) for every segment. Identities come from SO_PEERCRED, so a
 * client cannot claim another. Root passes because it can read any process's memory through /proc anyway; refusing
 * it would protect nothing. Requests arriving from authenticated peer daemons are outside this policy.
 * <p>
 * Checked on the conductor (OPEN_SEGMENT) and on every request in the transfer workers: allocation-free, no locks.
 */
public final class AccessPolicy
{
    public static final int ROOT_UID = 0;

    /** Same uid or root only. */
    public static final AccessPolicy OWNER_ONLY = new AccessPolicy(new int[0], new int[0]);

    private final int[] allowedUids;
    private final int[] allowedGids;

    public AccessPolicy(final int[] allowedUids, final int[] allowedGids)
    {
        this.allowedUids = allowedUids.clone();
        this.allowedGids = allowedGids.clone();
    }

    /**
     * @param clientUid the uid of the client that wants the segment.
     * @param clientGid the primary gid of that client (SO_PEERCRED carries no supplementary groups).
     * @param ownerUid  the uid of the segment's owner.
     * @return whether the client may open the segment and move bytes to and from it.
     */
    public boolean permits(final int clientUid, final int clientGid, final int ownerUid)
    {
        return clientUid == ownerUid || clientUid == ROOT_UID || contains(allowedUids, clientUid) ||
            contains(allowedGids, clientGid);
    }

    public boolean permits(final ClientSession client, final ClientSession owner)
    {
        return permits(client.uid(), client.gid(), owner.uid());
    }

    private static boolean contains(final int[] ids, final int id)
    {
        for (final int candidate : ids)
        {
            if (candidate == id)
            {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString()
    {
        return "owner uid, root, uids " + Arrays.toString(allowedUids) + ", gids " + Arrays.toString(allowedGids);
    }
}
