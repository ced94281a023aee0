package io.xferd.nativebindings;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Objects;

/**
 * An optional shared library opened with {@code dlopen} (through {@link SymbolLookup#libraryLookup(String, Arena)}),
 * or the reason it could not be: the first of several candidate names that loads wins. The library stays loaded for
 * the life of the process. Loading never throws; asking a library that did not load for a symbol throws
 * {@link LibraryUnavailableException}.
 */
@SuppressWarnings("restricted")
public final class NativeLibrary
{
    private static final Linker LINKER = Linker.nativeLinker();

    private final String library;
    private final String loadedName;
    private final SymbolLookup lookup;
    private final String failure;

    private NativeLibrary(final String library, final String loadedName, final SymbolLookup lookup, final String failure)
    {
        this.library = library;
        this.loadedName = loadedName;
        this.lookup = lookup;
        this.failure = failure;
    }

    /**
     * @param library    the library's short name for messages, e.g. {@code "libibverbs"}.
     * @param candidates file names tried in order, e.g. {@code "libcudart.so", "libcudart.so.13"}.
     * @return the first candidate that loads, or a value whose {@link #availability()} says why none did.
     */
    public static NativeLibrary load(final String library, final List<String> candidates)
    {
        Objects.requireNonNull(library, "library");
        final StringBuilder failures = new StringBuilder();
        for (final String name : candidates)
        {
            try
            {
                return new NativeLibrary(library, name, SymbolLookup.libraryLookup(name, Arena.global()), null);
            }
            catch (final RuntimeException e)
            {
                failures.append(failures.isEmpty() ? "" : "; ").append(name).append(": ").append(e.getMessage());
            }
        }
        return new NativeLibrary(library, null, null, "cannot load " + String.join(" or ", candidates) +
            " (" + failures + ")");
    }

    public boolean isLoaded()
    {
        return lookup != null;
    }

    /**
     * @return the file name that loaded, e.g. {@code "libibverbs.so.1"}; null when none did.
     */
    public String loadedName()
    {
        return loadedName;
    }

    /**
     * @return available when the library loaded (whether it is usable, e.g. has devices, is for its binding to
     * say), else unavailable with the loader's reason.
     */
    public Availability availability()
    {
        return isLoaded() ? Availability.available(library) : Availability.unavailable(library, failure);
    }

    /**
     * @throws LibraryUnavailableException when the library did not load.
     * @throws java.util.NoSuchElementException when it has no such symbol.
     */
    public MethodHandle downcall(final String symbol, final FunctionDescriptor descriptor, final Linker.Option... options)
    {
        requireLoaded();
        return LINKER.downcallHandle(lookup.findOrThrow(symbol), descriptor, options);
    }

    public void requireLoaded()
    {
        if (!isLoaded())
        {
            throw new LibraryUnavailableException(availability());
        }
    }
}
