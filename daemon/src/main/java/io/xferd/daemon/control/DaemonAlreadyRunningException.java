package io.xferd.daemon.control;

/**
 * A live daemon already serves the directory this one was asked to use.
 */
public final class DaemonAlreadyRunningException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public DaemonAlreadyRunningException(final String message)
    {
        super(message);
    }
}
