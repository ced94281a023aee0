package io.xferd.nativebindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Linux (x86_64, asm-generic) errno values the bindings and their callers test for, their symbolic names, and the
 * libc description ({@code strerror}).
 */
public final class Errno
{
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENOTDIR = 20;
    public static final int EINVAL = 22;
    public static final int ENFILE = 23;
    public static final int EMFILE = 24;
    public static final int ENOSPC = 28;
    public static final int EPIPE = 32;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOSYS = 38;
    public static final int ETIME = 62;
    public static final int ENOTSOCK = 88;
    public static final int EMSGSIZE = 90;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ECONNABORTED = 103;
    public static final int ECONNRESET = 104;
    public static final int ENOTCONN = 107;
    public static final int EALREADY = 114;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EINPROGRESS = 115;
    public static final int ECANCELED = 125;

    private static final String[] NAMES = new String[128];

    static
    {
        name(EPERM, "EPERM");
        name(ENOENT, "ENOENT");
        name(ESRCH, "ESRCH");
        name(EINTR, "EINTR");
        name(EIO, "EIO");
        name(EBADF, "EBADF");
        name(EAGAIN, "EAGAIN");
        name(ENOMEM, "ENOMEM");
        name(EACCES, "EACCES");
        name(EFAULT, "EFAULT");
        name(EBUSY, "EBUSY");
        name(EEXIST, "EEXIST");
        name(ENOTDIR, "ENOTDIR");
        name(EINVAL, "EINVAL");
        name(ENFILE, "ENFILE");
        name(EMFILE, "EMFILE");
        name(ENOSPC, "ENOSPC");
        name(EPIPE, "EPIPE");
        name(ENAMETOOLONG, "ENAMETOOLONG");
        name(ENOSYS, "ENOSYS");
        name(ENOTSOCK, "ENOTSOCK");
        name(EMSGSIZE, "EMSGSIZE");
        name(EOPNOTSUPP, "EOPNOTSUPP");
        name(EADDRINUSE, "EADDRINUSE");
        name(EADDRNOTAVAIL, "EADDRNOTAVAIL");
        name(ECONNABORTED, "ECONNABORTED");
        name(ECONNRESET, "ECONNRESET");
        name(ENOTCONN, "ENOTCONN");
        name(ETIMEDOUT, "ETIMEDOUT");
        name(ECONNREFUSED, "ECONNREFUSED");
        name(EINPROGRESS, "EINPROGRESS");
    }

    private Errno()
    {
    }

    private static void name(final int errno, final String name)
    {
        NAMES[errno] = name;
    }

    /**
     * @param errno an errno value.
     * @return its symbolic name, e.g. {@code "EAGAIN"}, or {@code "errno"} when not in the table.
     */
    public static String name(final int errno)
    {
        final String name = errno >= 0 && errno < NAMES.length ? NAMES[errno] : null;
        return name != null ? name : "errno";
    }

    /**
     * @param errno an errno value.
     * @return libc's description ({@code strerror}), or an empty string if it cannot be had.
     */
    @SuppressWarnings("restricted")
    public static String describe(final int errno)
    {
        try
        {
            final MemorySegment text = (MemorySegment)Strerror.STRERROR.invokeExact(errno);
            return text.equals(MemorySegment.NULL) ? "" : text.reinterpret(1024).getString(0);
        }
        catch (final Throwable ignore)
        {
            return "";
        }
    }

    @SuppressWarnings("restricted")
    private static final class Strerror
    {
        // glibc's strerror returns static strings for known values (a thread-local buffer for unknown ones).
        static final MethodHandle STRERROR = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("strerror"),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    }
}
