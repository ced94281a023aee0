package io.xferd.nativebindings;

import java.util.Objects;

/**
 * Whether a native library could be loaded, as a value rather than a crash: optional libraries (libibverbs,
 * libcudart) are probed lazily and the daemon reports the reason a transport is off. libc is always available.
 */
public final class Availability
{
    private final String library;
    private final boolean available;
    private final String reason;

    private Availability(final String library, final boolean available, final String reason)
    {
        this.library = Objects.requireNonNull(library, "library");
        this.available = available;
        this.reason = reason;
    }

    public static Availability available(final String library)
    {
        return new Availability(library, true, "");
    }

    public static Availability unavailable(final String library, final String reason)
    {
        return new Availability(library, false, Objects.requireNonNull(reason, "reason"));
    }

    public boolean isAvailable()
    {
        return available;
    }

    public String library()
    {
        return library;
    }

    /**
     * @return why the library is not available; empty when it is.
     */
    public String reason()
    {
        return reason;
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof Availability other &&
            available == other.available && library.equals(other.library) && reason.equals(other.reason);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(library, available, reason);
    }

    @Override
    public String toString()
    {
        return available ? library + ": available" : library + ": unavailable (" + reason + ")";
    }
}
