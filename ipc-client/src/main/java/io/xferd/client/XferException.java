package io.xferd.client;

/**
 * Base of every error the client library raises.
 */
public class XferException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public XferException(final String message)
    {
        super(message);
    }

    public XferException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
