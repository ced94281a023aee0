package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * poll(2) over a reusable array of {@code struct pollfd}, for a conductor that watches its listener and every client
 * connection. Nothing is allocated per {@link #poll(int)}; one instance belongs to one thread.
 * <pre>
 *   0      4        6         8
 *   +------+--------+---------+
 *   | fd   | events | revents |   one entry, repeated capacity times
 *   +------+--------+---------+
 * </pre>
 */
public final class Poller
{
    static final short POLLIN = 0x001;
    static final short POLLERR = 0x008;
    static final short POLLHUP = 0x010;
    static final short POLLNVAL = 0x020;
    private static final long ENTRY_SIZE = 8;
    private static final long EVENTS_OFFSET = 4;
    private static final long REVENTS_OFFSET = 6;

    private static final MethodHandle POLL =
        Libc.downcallCapturingErrno("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));

    private final MemorySegment entries;
    private final int capacity;
    private int size;

    public Poller(final int capacity)
    {
        if (capacity <= 0)
        {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
        this.entries = Arena.ofAuto().allocate(ENTRY_SIZE * capacity, 4);
    }

    public void clear()
    {
        size = 0;
    }

    /**
     * Watches {@code fd} for input (POLLIN; hangup and errors are always reported).
     *
     * @return the index to query after {@link #poll(int)}.
     */
    public int add(final int fd)
    {
        if (size == capacity)
        {
            throw new IllegalStateException("poller full: capacity " + capacity);
        }
        final int index = size++;
        final long base = index * ENTRY_SIZE;
        entries.set(JAVA_INT, base, fd);
        entries.set(JAVA_SHORT, base + EVENTS_OFFSET, POLLIN);
        entries.set(JAVA_SHORT, base + REVENTS_OFFSET, (short)0);
        return index;
    }

    /**
     * @param timeoutMillis -1 waits without limit, 0 returns at once.
     * @return the number of descriptors with events; 0 on timeout or when interrupted by a signal (EINTR).
     */
    public int poll(final int timeoutMillis)
    {
        final MemorySegment capture = CallScratch.capture();
        final int ready;
        try
        {
            ready = (int)POLL.invokeExact(capture, entries, (long)size, timeoutMillis);
        }
        catch (final Throwable t)
        {
            throw Libc.rethrow(t);
        }
        if (ready < 0)
        {
            final int errno = CallScratch.errno(capture);
            if (errno == Errno.EINTR)
            {
                clearEvents();
                return 0;
            }
            throw new NativeException("poll", errno, "nfds=" + size);
        }
        return ready;
    }

    public boolean isReadable(final int index)
    {
        return (revents(index) & POLLIN) != 0;
    }

    /**
     * @return true when the peer hung up, the descriptor has an error, or it is not open (POLLHUP|POLLERR|POLLNVAL).
     */
    public boolean isHangup(final int index)
    {
        return (revents(index) & (POLLHUP | POLLERR | POLLNVAL)) != 0;
    }

    public int fd(final int index)
    {
        checkIndex(index);
        return entries.get(JAVA_INT, index * ENTRY_SIZE);
    }

    public int size()
    {
        return size;
    }

    public int capacity()
    {
        return capacity;
    }

    private int revents(final int index)
    {
        checkIndex(index);
        return entries.get(JAVA_SHORT, index * ENTRY_SIZE + REVENTS_OFFSET);
    }

    private void clearEvents()
    {
        for (int i = 0; i < size; i++)
        {
            entries.set(JAVA_SHORT, i * ENTRY_SIZE + REVENTS_OFFSET, (short)0);
        }
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("index " + index + " not in [0, " + size + ")");
        }
    }
}
