package io.xferd.nativebindings;

/**
 * A binding of an optional library was called while the library is not usable (not installed, or no devices); the
 * message is the {@link Availability}'s reason.
 */
public final class LibraryUnavailableException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final transient Availability availability;

    public LibraryUnavailableException(final Availability availability)
    {
        super(availability.toString());
        this.availability = availability;
    }

    public Availability availability()
    {
        return availability;
    }
}
