package io.xferd.daemon.peer;

import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * One peer thread's pinned host buffer for GPU memory over TCP: a socket cannot read or write device memory, so a
 * GPU slice crosses here a chunk at a time, one synchronous device copy per chunk; any slice length works with any
 * buffer size. Allocated on the first GPU slice, so a daemon serving only host memory never loads the GPU runtime;
 * freed when its thread is done. One thread only.
 */
final class StagingBuffer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StagingBuffer.class);

    private final DeviceMemory deviceMemory;
    private final int capacity;
    private MemorySegment pinned;
    private ByteBuffer view;

    StagingBuffer(final DeviceMemory deviceMemory, final int capacity)
    {
        this.deviceMemory = deviceMemory;
        this.capacity = capacity;
    }

    int capacity()
    {
        return capacity;
    }

    /**
     * Copy up to {@link #capacity()} bytes of the region's device memory, at the owner's {@code address}, in.
     *
     * @return the buffer, its remaining bytes exactly those.
     * @throws RuntimeException when the device copy failed.
     */
    ByteBuffer fromDevice(final Region region, final long address, final int length)
    {
        final ByteBuffer buffer = buffer(length);
        deviceMemory.copy(region.device(), pinned.address(), region.daemonAddress(address), length);
        return buffer;
    }

    /**
     * Read {@code length} bytes from {@code in} into the region's device memory at the owner's {@code address}.
     * A failed copy stops the copying, not the reading: the rest is consumed so that the stream stays in step.
     *
     * @return true when every byte is on the device; false when a copy failed.
     */
    boolean receive(final BufferedChannel in, final Region region, final long address, final long length)
        throws IOException
    {
        for (long done = 0; done < length; )
        {
            final int chunk = (int)Math.min(capacity, length - done);
            in.readFully(buffer(chunk));
            try
            {
                deviceMemory.copy(region.device(), region.daemonAddress(address + done), pinned.address(), chunk);
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("copy to {} failed, {} of {} bytes placed: {}", region, done, length, ex.toString());
                in.skip(length - done - chunk);
                return false;
            }
            done += chunk;
        }
        return true;
    }

    /**
     * Write {@code length} bytes of the region's device memory at the owner's {@code address} to {@code out}, a
     * chunk at a time (copy, then write it fully, as the next copy reuses the buffer).
     *
     * @param firstStaged whether the caller already staged the first chunk with {@link #fromDevice}.
     * @return {@code length}, or how many bytes were written before a device copy failed.
     */
    long send(
        final SocketChannel out, final Region region, final long address, final long length, final boolean firstStaged)
        throws IOException
    {
        long done = 0;
        while (done < length)
        {
            final int chunk = (int)Math.min(capacity, length - done);
            final ByteBuffer staged;
            if (done == 0 && firstStaged)
            {
                staged = view.clear().limit(chunk);
            }
            else
            {
                try
                {
                    staged = fromDevice(region, address + done, chunk);
                }
                catch (final RuntimeException ex)
                {
                    LOG.warn("copy from {} failed, {} of {} bytes sent: {}", region, done, length, ex.toString());
                    return done;
                }
            }
            FrameIo.writeFully(out, staged);
            done += chunk;
        }
        return done;
    }

    /**
     * Write {@code length} zero bytes: what a frame still owes its peer after a device copy failed.
     */
    void pad(final SocketChannel out, final long length) throws IOException
    {
        buffer(0);
        pinned.fill((byte)0);
        for (long done = 0; done < length; )
        {
            final int chunk = (int)Math.min(capacity, length - done);
            FrameIo.writeFully(out, view.clear().limit(chunk));
            done += chunk;
        }
    }

    private ByteBuffer buffer(final int length)
    {
        if (pinned == null)
        {
            pinned = deviceMemory.allocatePinned(capacity);
            view = pinned.asByteBuffer();
        }
        return view.clear().limit(length);
    }

    @Override
    public void close()
    {
        final MemorySegment memory = pinned;
        if (memory != null)
        {
            pinned = null;
            view = null;
            try
            {
                deviceMemory.freePinned(memory);
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("cannot free the pinned staging buffer: {}", ex.toString());
            }
        }
    }
}
