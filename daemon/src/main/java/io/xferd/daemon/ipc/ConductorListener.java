package io.xferd.daemon.ipc;

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
     * A region was registered or unregistered: {@link ClientSession#regions()} is the new table.
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
