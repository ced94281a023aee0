package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A non-blocking {@code eventfd(2)}: any thread {@link #signal}s it, one thread waits for it to become readable
 * (polled by an io_uring, see {@link IoUring#preparePollIn}) and {@link #drain}s it. Neither call allocates.
 */
public final class EventFd implements AutoCloseable
{
    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;

    private static final MethodHandle EVENTFD =
        Libc.downcallCapturingErrno("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    // int eventfd_write(int fd, eventfd_t value): the value travels by value, no buffer
    private static final MethodHandle EVENTFD_WRITE =
        Libc.downcall("eventfd_write", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle EVENTFD_READ =
        Libc.downcall("eventfd_read", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    private final int fd;
    private final Arena arena = Arena.ofShared();
    // the draining thread's only: where eventfd_read puts the count
    private final MemorySegment count = arena.allocate(JAVA_LONG);
    private boolean closed;

    private EventFd(final int fd)
    {
        this.fd = fd;
    }

    public static EventFd open()
    {
        final MemorySegment capture = CallScratch.capture();
        final int fd;
        try
        {
            fd = (int)EVENTFD.invokeExact(capture, 0, EFD_NONBLOCK | EFD_CLOEXEC);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (fd < 0)
        {
            throw new NativeException("eventfd", CallScratch.errno(capture), "");
        }
        return new EventFd(fd);
    }

    public int fd()
    {
        return fd;
    }

    /**
     * Makes it readable (adds 1 to its count). Any thread; a full count (2^64 - 2) cannot happen in practice.
     */
    public void signal()
    {
        try
        {
            final int ignored = (int)EVENTFD_WRITE.invokeExact(fd, 1L);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
    }

    /**
     * Resets the count to 0 (a poll on it stops firing). One thread.
     *
     * @return the count it had (0 when it was not signalled).
     */
    public long drain()
    {
        final int result;
        try
        {
            result = (int)EVENTFD_READ.invokeExact(fd, count);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        return result == 0 ? count.get(JAVA_LONG, 0) : 0; // EAGAIN: nothing signalled
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            FileDescriptors.close(fd);
            arena.close();
        }
    }
}
