package io.xferd.daemon.control;

import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;

/**
 * Lets tests outside this package give a session its region table, as the conductor does on REGISTER.
 */
public final class SessionRegions
{
    private SessionRegions()
    {
    }

    public static void set(final ClientSession session, final RegionTable regions)
    {
        session.regions(regions);
    }
}
