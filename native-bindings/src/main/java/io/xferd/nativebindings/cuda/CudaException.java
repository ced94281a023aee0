package io.xferd.nativebindings.cuda;

/**
 * A CUDA runtime call returned an error: the {@code cudaError_t} code, its name and the runtime's description, e.g.
 * {@code "cudaMalloc failed: cudaErrorMemoryAllocation (2) out of memory; size=1099511627776"}.
 */
public final class CudaException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int code;

    public CudaException(final String function, final int code, final String name, final String description,
        final String detail)
    {
        super(function + " failed: " + name + " (" + code + ") " + description + (detail == null ? "" : "; " + detail));
        this.function = function;
        this.code = code;
    }

    /**
     * @return the {@code cudaError_t} value, e.g. 35 for cudaErrorInsufficientDriver.
     */
    public int code()
    {
        return code;
    }

    public String function()
    {
        return function;
    }
}
