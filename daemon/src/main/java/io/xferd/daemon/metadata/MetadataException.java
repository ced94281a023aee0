package io.xferd.daemon.metadata;

/**
 * A metadata store could not be reached, did not answer in time, or refused an operation.
 */
public final class MetadataException extends RuntimeException
{
    public MetadataException(final String message)
    {
        super(message);
    }

    public MetadataException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
