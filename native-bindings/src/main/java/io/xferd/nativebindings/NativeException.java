package io.xferd.nativebindings;

/**
 * A native call failed: carries the name of the C function and the {@code errno} it left, captured right after the
 * call (never read later from a possibly clobbered thread-local).
 * <p>
 * The message reads {@code "memfd_create failed: EMFILE (24) Too many open files"}, optionally followed by
 * {@code "; " + detail} (a path, a pid) when the caller supplied one.
 */
public final class NativeException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;

    public NativeException(final String function, final int errno)
    {
        this(function, errno, null);
    }

    public NativeException(final String function, final int errno, final String detail)
    {
        super(message(function, errno, detail));
        this.function = function;
        this.errno = errno;
    }

    /**
     * @return the errno value the failed call left, e.g. {@link Errno#ENOENT}.
     */
    public int errno()
    {
        return errno;
    }

    /**
     * @return the C function that failed, e.g. {@code "connect"}.
     */
    public String function()
    {
        return function;
    }

    private static String message(final String function, final int errno, final String detail)
    {
        final StringBuilder sb = new StringBuilder(64)
            .append(function).append(" failed: ").append(Errno.name(errno)).append(" (").append(errno).append(')');
        final String description = Errno.describe(errno);
        if (!description.isEmpty())
        {
            sb.append(' ').append(description);
        }
        if (detail != null)
        {
            sb.append("; ").append(detail);
        }
        return sb.toString();
    }
}
