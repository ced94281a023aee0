package io.xferd.daemon.control;

import io.xferd.daemon.session.ClientSession;

/**
 * What the {@link ControlConductor} tells the operations side (registry file, systemd watchdog), on the conductor
 * thread: control-plane events and each housekeeping pass. Implementations may allocate but must not block.
 */
public interface ConductorListener
{
    ConductorListener NONE = new ConductorListener()
    {
    };

    default void onClientConnected(final ClientSession session)
    {
    }

    /**
     * A region was registered: {@link ClientSession#regions()} holds it. Cost should not grow with the number of
     * regions the client has.
     */
    default void onRegionAdded(final ClientSession session, final io.xferd.daemon.memory.Region region)
    {
        onRegionsChanged(session);
    }

    /**
     * A region was unregistered: {@link ClientSession#regions()} no longer holds it.
     */
    default void onRegionRemoved(final ClientSession session, final io.xferd.daemon.memory.Region region)
    {
        onRegionsChanged(session);
    }

    /**
     * The regions changed in some other way: {@link ClientSession#regions()} is the new table.
     */
    default void onRegionsChanged(final ClientSession session)
    {
    }

    default void onClientDisconnected(final ClientSession session)
    {
    }

    /**
     * Every duty cycle of the conductor (every few ms), after its own housekeeping.
     */
    default void onHousekeeping(final long nowMs)
    {
    }
}
