package io.xferd.daemon.storage;

/**
 * A REGISTER_FILE the daemon refuses: the conductor answers it with ERROR INVALID_ARGUMENT, or MAP_FAILED when the
 * daemon cannot serve storage at all ({@link #daemonSide()}).
 */
public final class StorageRefusedException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final boolean daemonSide;

    public StorageRefusedException(final boolean daemonSide, final String message)
    {
        super(message);
        this.daemonSide = daemonSide;
    }

    public boolean daemonSide()
    {
        return daemonSide;
    }
}
