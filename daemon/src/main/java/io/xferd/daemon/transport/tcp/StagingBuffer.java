package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.ProcessMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.storage.StorageIo;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Errno;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * One peer thread's host buffer for memory a socket cannot reach directly, a chunk at a time, one copy per chunk:
 * GPU memory (through pinned host memory, one synchronous device copy per chunk) and a client's process memory
 * (through plain memory, one process_vm_readv/writev per chunk); any slice length works with any buffer size. Each
 * buffer is allocated on the first slice that needs it, so a daemon serving only mapped host memory never loads the
 * GPU runtime; freed when its thread is done. A storage region (a file) is read into and written from the plain
 * buffer through this thread's {@link StorageIo}, so a peer's READ of a file is one file read and a socket write per
 * chunk. A failed copy is a status: {@link TransferStatus#TRANSPORT_ERROR} for a device copy,
 * {@link TransferStatus#MEMORY_FAULT} for process memory, a storage status for a file. One thread only.
 */
final class StagingBuffer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StagingBuffer.class);

    private final DeviceMemory deviceMemory;
    private final int capacity;
    private final StorageIo storage;
    private MemorySegment pinned;
    private ByteBuffer pinnedView;
    private Arena plainArena;
    private MemorySegment plain;
    private ByteBuffer plainView;
    // the memory the last stage() or buffer() used
    private MemorySegment current;
    private ByteBuffer view;
    private int lastSendFailure = TransferStatus.OK;

    StagingBuffer(final DeviceMemory deviceMemory, final int capacity)
    {
        this(deviceMemory, capacity, null);
    }

    /**
     * @param storage this thread's storage agent, for file regions; null where none can reach this buffer.
     */
    StagingBuffer(final DeviceMemory deviceMemory, final int capacity, final StorageIo storage)
    {
        this.deviceMemory = deviceMemory;
        this.capacity = capacity;
        this.storage = storage;
    }

    /**
     * A peer thread's buffer, with its own storage agent (no io_uring is set up until a file region needs one).
     */
    static StagingBuffer create(final DaemonContext context, final SystemCounters counters)
    {
        return new StagingBuffer(context.deviceMemory(), context.stagingBufferSize(),
            new StorageIo(context.storageQueueDepth(), counters.get(SystemCounter.STORAGE_BYTES_READ),
                counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
                counters.get(SystemCounter.STORAGE_SYNCS)));
    }

    int capacity()
    {
        return capacity;
    }

    /**
     * Copy up to {@link #capacity()} bytes of the region's device or process memory, at the owner's
     * {@code address}, in; {@link #staged()} then holds exactly those.
     *
     * @return {@link TransferStatus#OK}, or the status of a failed copy.
     * @throws RuntimeException when no pinned memory can be had for a device region.
     */
    int stage(final Region region, final long address, final int length)
    {
        buffer(region, length);
        if (region.isFile())
        {
            return fileStorage().read(region.file(), region.offsetOf(address), current.address(), length);
        }
        if (region.isProcess())
        {
            final int errno = ProcessMemory.read(region.pid(), address, current.address(), length);
            return errno == 0 ? TransferStatus.OK : processFailure(errno, region, "from");
        }
        try
        {
            deviceMemory.copy(region.device(), current.address(), region.daemonAddress(address), length);
            return TransferStatus.OK;
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("copy from {} failed: {}", region, ex.toString());
            return TransferStatus.TRANSPORT_ERROR;
        }
    }

    /**
     * @return the bytes the last successful {@link #stage} brought in.
     */
    ByteBuffer staged()
    {
        return view;
    }

    /**
     * Read {@code length} bytes from {@code in} into the region's device or process memory at the owner's
     * {@code address}. A failed copy stops the copying, not the reading: the rest is consumed so that the stream
     * stays in step.
     *
     * @return {@link TransferStatus#OK} when every byte is in place; else the failed copy's status.
     */
    int receive(final BufferedChannel in, final Region region, final long address, final long length)
        throws IOException
    {
        for (long done = 0; done < length; )
        {
            final int chunk = (int)Math.min(capacity, length - done);
            in.readFully(buffer(region, chunk));
            final int status = land(region, address + done, chunk);
            if (status != TransferStatus.OK)
            {
                LOG.debug("{} of {} bytes placed in {} before a copy failed", done, length, region);
                in.skip(length - done - chunk);
                return status;
            }
            done += chunk;
        }
        return TransferStatus.OK;
    }

    private int land(final Region region, final long address, final int chunk)
    {
        if (region.isFile())
        {
            return fileStorage().write(region.file(), region.offsetOf(address), current.address(), chunk);
        }
        if (region.isProcess())
        {
            final int errno = ProcessMemory.write(region.pid(), address, current.address(), chunk);
            return errno == 0 ? TransferStatus.OK : processFailure(errno, region, "to");
        }
        try
        {
            deviceMemory.copy(region.device(), region.daemonAddress(address), current.address(), chunk);
            return TransferStatus.OK;
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("copy to {} failed: {}", region, ex.toString());
            return TransferStatus.TRANSPORT_ERROR;
        }
    }

    /**
     * Write {@code length} bytes of the region's device or process memory at the owner's {@code address} to
     * {@code out}, a chunk at a time (copy, then write it fully, as the next copy reuses the buffer).
     *
     * @param firstStaged whether the caller already staged the first chunk with {@link #stage}.
     * @return {@code length}, or how many bytes were written before a copy failed.
     */
    long send(
        final SocketChannel out, final Region region, final long address, final long length, final boolean firstStaged)
        throws IOException
    {
        long done = 0;
        while (done < length)
        {
            final int chunk = (int)Math.min(capacity, length - done);
            final int status = done == 0 && firstStaged ? TransferStatus.OK : stage(region, address + done, chunk);
            if (status != TransferStatus.OK)
            {
                lastSendFailure = status;
                LOG.debug("{} of {} bytes of {} sent before a copy failed", done, length, region);
                return done;
            }
            FrameIo.writeFully(out, view.clear().limit(chunk));
            done += chunk;
        }
        return done;
    }

    /**
     * @return the status of the copy that last stopped a {@link #send} short.
     */
    int lastSendFailure()
    {
        return lastSendFailure;
    }

    /**
     * Write {@code length} zero bytes: what a frame still owes its peer after a copy failed.
     */
    void pad(final SocketChannel out, final long length) throws IOException
    {
        if (current == null)
        {
            plain(0);
        }
        current.fill((byte)0);
        for (long done = 0; done < length; )
        {
            final int chunk = (int)Math.min(capacity, length - done);
            FrameIo.writeFully(out, view.clear().limit(chunk));
            done += chunk;
        }
    }

    private static int processFailure(final int errno, final Region region, final String direction)
    {
        // EFAULT is the client's own doing (it unmapped registered memory); anything else is worth a look
        if (errno == Errno.EFAULT)
        {
            LOG.debug("process_vm copy {} {} failed: EFAULT", direction, region);
        }
        else
        {
            LOG.warn("process_vm copy {} {} failed: {}", direction, region, Errno.name(errno));
        }
        return TransferStatus.MEMORY_FAULT;
    }

    private ByteBuffer buffer(final Region region, final int length)
    {
        return region.isProcess() || region.isFile() ? plain(length) : pinned(length);
    }

    private StorageIo fileStorage()
    {
        if (storage == null)
        {
            throw new IllegalStateException("a file region reached a staging buffer without a storage agent");
        }
        return storage;
    }

    private ByteBuffer pinned(final int length)
    {
        if (pinned == null)
        {
            pinned = deviceMemory.allocatePinned(capacity);
            pinnedView = pinned.asByteBuffer();
        }
        current = pinned;
        view = pinnedView;
        return view.clear().limit(length);
    }

    private ByteBuffer plain(final int length)
    {
        if (plain == null)
        {
            plainArena = Arena.ofShared();
            plain = plainArena.allocate(capacity, 4096);
            plainView = plain.asByteBuffer();
        }
        current = plain;
        view = plainView;
        return view.clear().limit(length);
    }

    @Override
    public void close()
    {
        if (storage != null)
        {
            storage.close();
        }
        current = null;
        view = null;
        final MemorySegment memory = pinned;
        if (memory != null)
        {
            pinned = null;
            pinnedView = null;
            try
            {
                deviceMemory.freePinned(memory);
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("cannot free the pinned staging buffer: {}", ex.toString());
            }
        }
        if (plainArena != null)
        {
            plain = null;
            plainView = null;
            plainArena.close();
            plainArena = null;
        }
    }
}
