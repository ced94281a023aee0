package io.xferd.daemon.session;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which local clients may reach a segment: the owner's own uid, root, the uids and gids the operator granted
 * (config {@code allowed_uids}, {@code allowed_gids}) for every segment, and those granted one segment by its name
 * (config {@code segment_grants}). Identities come from SO_PEERCRED, so a
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

    /**
     * The uids and primary gids granted one segment, on top of the daemon-wide lists.
     */
    public record Grant(int[] uids, int[] gids)
    {
        public Grant
        {
            uids = uids.clone();
            gids = gids.clone();
        }

        @Override
        public String toString()
        {
            return "uids " + Arrays.toString(uids) + ", gids " + Arrays.toString(gids);
        }
    }

    private final int[] allowedUids;
    private final int[] allowedGids;
    private final Map<String, Grant> segmentGrants;

    public AccessPolicy(final int[] allowedUids, final int[] allowedGids)
    {
        this(allowedUids, allowedGids, Map.of());
    }

    /**
     * @param segmentGrants by segment name (as its owner said it in HELLO): who else may reach that segment.
     */
    public AccessPolicy(final int[] allowedUids, final int[] allowedGids, final Map<String, Grant> segmentGrants)
    {
        this.allowedUids = allowedUids.clone();
        this.allowedGids = allowedGids.clone();
        this.segmentGrants = Map.copyOf(segmentGrants);
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

    /**
     * @param segmentName the segment's name as its owner said it in HELLO.
     * @return whether the client may reach that segment, by the daemon-wide rules or by the segment's grant.
     */
    public boolean permits(final int clientUid, final int clientGid, final int ownerUid, final String segmentName)
    {
        if (permits(clientUid, clientGid, ownerUid))
        {
            return true;
        }
        final Grant grant = segmentGrants.get(segmentName); // only when refused otherwise: no lookup on the usual path
        return grant != null && (contains(grant.uids, clientUid) || contains(grant.gids, clientGid));
    }

    public boolean permits(final ClientSession client, final ClientSession owner)
    {
        return permits(client.uid(), client.gid(), owner.uid(), owner.segmentName());
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
        return "owner uid, root, uids " + Arrays.toString(allowedUids) + ", gids " + Arrays.toString(allowedGids) +
            (segmentGrants.isEmpty() ? "" : ", per segment " + new TreeMap<>(segmentGrants));
    }
}
