package io.xferd.client;

/**
 * GPU memory was to be registered but this process has no usable CUDA runtime (libcudart not installed, no driver,
 * or no device); the message says which. Nothing was sent to the daemon and the client stays usable.
 */
public final class CudaUnavailableException extends XferException
{
    private static final long serialVersionUID = 1L;

    public CudaUnavailableException(final String message)
    {
        super(message);
    }
}
