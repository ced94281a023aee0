package io.xferd.nativebindings.libc;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The linker, libc lookup and downcall factory shared by the libc bindings, plus the errno offset in the captured
 * call state. Only used from static initialisers of holder classes, so each handle is made once.
 */
@SuppressWarnings("restricted")
final class Libc
{
    static final Linker LINKER = Linker.nativeLinker();
    static final SymbolLookup LOOKUP = LINKER.defaultLookup();
    static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    static final long ERRNO_OFFSET =
        Linker.Option.captureStateLayout().byteOffset(MemoryLayout.PathElement.groupElement("errno"));
    static final long CAPTURE_STATE_SIZE = Linker.Option.captureStateLayout().byteSize();

    private Libc()
    {
    }

    /**
     * A handle whose first parameter is the capture-state segment ({@link CallScratch#capture()}).
     */
    static MethodHandle downcallCapturingErrno(final String name, final FunctionDescriptor descriptor)
    {
        return LINKER.downcallHandle(LOOKUP.findOrThrow(name), descriptor, CAPTURE_ERRNO);
    }

    /**
     * As {@link #downcallCapturingErrno(String, FunctionDescriptor)} for a variadic function called with the
     * variadic arguments starting at {@code firstVariadicArg}.
     */
    static MethodHandle downcallVariadicCapturingErrno(
        final String name, final FunctionDescriptor descriptor, final int firstVariadicArg)
    {
        return LINKER.downcallHandle(
            LOOKUP.findOrThrow(name), descriptor, CAPTURE_ERRNO, Linker.Option.firstVariadicArg(firstVariadicArg));
    }

    static MethodHandle downcall(final String name, final FunctionDescriptor descriptor)
    {
        return LINKER.downcallHandle(LOOKUP.findOrThrow(name), descriptor);
    }

    static RuntimeException rethrow(final Throwable t)
    {
        if (t instanceof RuntimeException re)
        {
            throw re;
        }
        if (t instanceof Error e)
        {
            throw e;
        }
        throw new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
