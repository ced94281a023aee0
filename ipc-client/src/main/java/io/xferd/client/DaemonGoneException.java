package io.xferd.client;

/**
 * The daemon went away (its socket closed or its heartbeat stopped) or was never there. Pending requests are
 * failed with {@link io.xferd.ipc.TransferStatus#DAEMON_GONE}; close this client and connect again once a
 * daemon runs.
 */
public final class DaemonGoneException extends XferException
{
    private static final long serialVersionUID = 1L;

    public DaemonGoneException(final String message)
    {
        super(message);
    }

    public DaemonGoneException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
