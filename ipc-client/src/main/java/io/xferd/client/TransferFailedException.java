package io.xferd.client;

import io.xferd.ipc.TransferStatus;

/**
 * A synchronous transfer ended without moving all of its bytes.
 */
public final class TransferFailedException extends XferException
{
    private static final long serialVersionUID = 1L;

    private final int status;

    public TransferFailedException(final String operation, final int status)
    {
        super(operation + " failed: " + TransferStatus.name(status));
        this.status = status;
    }

    /**
     * @return the {@link TransferStatus} code.
     */
    public int status()
    {
        return status;
    }
}
