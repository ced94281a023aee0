package io.xferd.client;

import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;

import java.util.ArrayList;
import java.util.List;

/**
 * The memory this client allocated for the daemon to map: memfds mapped here, each kept with its descriptor so that
 * registering a range inside it can pass the descriptor along. Callers hold the client's control lock.
 */
final class SharedBuffers implements AutoCloseable
{
    private final String name;
    private final List<SharedBuffer> buffers = new ArrayList<>();

    /**
     * @param name what the memfds are called (it shows in /proc/PID/maps and /proc/PID/fd).
     */
    SharedBuffers(final String name)
    {
        this.name = name;
    }

    SharedBuffer allocate(final long length)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        final int fd = Memfd.createSealable(name);
        try
        {
            Memfd.truncate(fd, length);
            // the daemon maps only memory that cannot shrink under its copies (SIGBUS), and checks the seal
            Memfd.addSeals(fd, Memfd.SEAL_SHRINK);
            final SharedBuffer buffer = new SharedBuffer(fd, MappedMemory.mapShared(fd, 0, length));
            buffers.add(buffer);
            return buffer;
        }
        catch (final RuntimeException ex)
        {
            Memfd.close(fd);
            throw ex;
        }
    }

    /**
     * @return the buffer that holds all of [address, address + length), or null when none does.
     */
    SharedBuffer find(final long address, final long length)
    {
        for (final SharedBuffer buffer : buffers)
        {
            if (buffer.contains(address, length))
            {
                return buffer;
            }
        }
        return null;
    }

    /**
     * Unmap and close one buffer; one this client did not allocate (or freed already) is left alone.
     *
     * @return whether it was this client's.
     */
    boolean free(final SharedBuffer buffer)
    {
        if (!buffers.remove(buffer))
        {
            return false;
        }
        release(buffer);
        return true;
    }

    int size()
    {
        return buffers.size();
    }

    @Override
    public void close()
    {
        for (final SharedBuffer buffer : buffers)
        {
            release(buffer);
        }
        buffers.clear();
    }

    private static void release(final SharedBuffer buffer)
    {
        MappedMemory.unmap(buffer.segment());
        Memfd.close(buffer.fd());
    }
}
