package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.ProcessMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.storage.StorageIo;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.Errno;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The local copy of one request between two borrowed regions, by the kind of memory on each side: host to host is
 * one {@link MemorySegment#copy} between the mappings, as fast as before GPU memory existed (the kind is checked
 * once per request, never per byte); anything touching device memory goes through {@link DeviceMemory}, issued on
 * the device of the GPU side. A client's process memory (no mapping) moves with one process_vm call against the
 * other side's mapping, or, when neither side is mapped (process to process, process to and from a GPU), a chunk at
 * a time through this worker's bounce buffer. A file region moves through this worker's {@link StorageIo} (its own
 * io_uring): straight to or from the other side's mapping, or through the bounce buffer when the other side has no
 * mapping. Between a file and GPU memory the bounce buffer is pinned and in two halves: the device copy of one
 * chunk (a DMA) runs while the file operation of the next one does. A failed device copy, process_vm call or file
 * operation fails that request alone. One worker thread only.
 */
final class RegionCopier
{
    private static final Logger LOG = LoggerFactory.getLogger(RegionCopier.class);

    static final int DEFAULT_BOUNCE_SIZE = 1 << 20;

    private final DeviceMemory deviceMemory;
    private final int bounceSize;
    private final StorageIo storage;
    private MemorySegment bounce;
    // file <-> GPU: two halves of bounceSize, page-locked; null until the first such request (or when refused)
    private MemorySegment pinned;
    private boolean pinnedRefused;

    /**
     * A copier for memory only (no storage agent): file regions never reach it.
     */
    RegionCopier(final DeviceMemory deviceMemory)
    {
        this(deviceMemory, DEFAULT_BOUNCE_SIZE, null);
    }

    RegionCopier(final DeviceMemory deviceMemory, final int bounceSize)
    {
        this(deviceMemory, bounceSize, null);
    }

    RegionCopier(final DeviceMemory deviceMemory, final StorageIo storage)
    {
        this(deviceMemory, DEFAULT_BOUNCE_SIZE, storage);
    }

    RegionCopier(final DeviceMemory deviceMemory, final int bounceSize, final StorageIo storage)
    {
        this.deviceMemory = deviceMemory;
        this.bounceSize = bounceSize;
        this.storage = storage;
    }

    /**
     * WRITE copies local to target, READ target to local.
     *
     * @return {@link TransferStatus#OK}; {@link TransferStatus#TRANSPORT_ERROR} when the device copy failed;
     * {@link TransferStatus#MEMORY_FAULT} when a process's memory could not be read or written.
     */
    int copy(
        final int opcode,
        final Region local,
        final long localAddress,
        final Region target,
        final long targetAddress,
        final long length)
    {
        final boolean write = opcode == Opcode.WRITE;
        final Region source = write ? local : target;
        final long sourceAddress = write ? localAddress : targetAddress;
        final Region destination = write ? target : local;
        final long destinationAddress = write ? targetAddress : localAddress;
        if (source.isMapped() & destination.isMapped())
        {
            MemorySegment.copy(source.mapping(), source.offsetOf(sourceAddress),
                destination.mapping(), destination.offsetOf(destinationAddress), length);
            return TransferStatus.OK;
        }
        if (source.isFile() | destination.isFile())
        {
            return copyWithFile(source, sourceAddress, destination, destinationAddress, length);
        }
        if (source.isProcess() | destination.isProcess())
        {
            return copyWithProcess(source, sourceAddress, destination, destinationAddress, length);
        }
        return copyWithDevice(source, sourceAddress, destination, destinationAddress, length);
    }

    private int copyWithFile(
        final Region source,
        final long sourceAddress,
        final Region destination,
        final long destinationAddress,
        final long length)
    {
        if (source.isFile() && destination.isMapped())
        {
            return storage.read(source.file(), source.offsetOf(sourceAddress),
                destination.mapping().address() + destination.offsetOf(destinationAddress), length);
        }
        if (destination.isFile() && source.isMapped())
        {
            return storage.write(destination.file(), destination.offsetOf(destinationAddress),
                source.mapping().address() + source.offsetOf(sourceAddress), length);
        }
        if ((source.isDevice() | destination.isDevice()) && pinned() != null)
        {
            return source.isFile() ?
                fileToDevice(source, sourceAddress, destination, destinationAddress, length) :
                deviceToFile(source, sourceAddress, destination, destinationAddress, length);
        }
        final long bounceAddress = bounce().address();
        for (long done = 0; done < length; )
        {
            final long chunk = Math.min(bounceSize, length - done);
            final int status = source.isFile() ?
                storage.read(source.file(), source.offsetOf(sourceAddress + done), bounceAddress, chunk) :
                stage(source, sourceAddress + done, bounceAddress, chunk);
            if (status != TransferStatus.OK)
            {
                return status;
            }
            final int landed = destination.isFile() ?
                storage.write(destination.file(), destination.offsetOf(destinationAddress + done), bounceAddress,
                    chunk) :
                land(destination, destinationAddress + done, bounceAddress, chunk);
            if (landed != TransferStatus.OK)
            {
                return landed;
            }
            done += chunk;
        }
        return TransferStatus.OK;
    }

    private int copyWithProcess(
        final Region source,
        final long sourceAddress,
        final Region destination,
        final long destinationAddress,
        final long length)
    {
        if (source.isMapped())
        {
            return processStatus(ProcessMemory.write(destination.pid(), destinationAddress,
                source.mapping().address() + source.offsetOf(sourceAddress), length), destination, length);
        }
        if (destination.isMapped())
        {
            return processStatus(ProcessMemory.read(source.pid(), sourceAddress,
                destination.mapping().address() + destination.offsetOf(destinationAddress), length), source, length);
        }
        final long bounceAddress = bounce().address();
        for (long done = 0; done < length; )
        {
            final long chunk = Math.min(bounceSize, length - done);
            final int status = stage(source, sourceAddress + done, bounceAddress, chunk);
            if (status != TransferStatus.OK)
            {
                return status;
            }
            final int landed = land(destination, destinationAddress + done, bounceAddress, chunk);
            if (landed != TransferStatus.OK)
            {
                return landed;
            }
            done += chunk;
        }
        return TransferStatus.OK;
    }

    /**
     * Read a chunk of the file into one half of the pinned buffer while the other half's chunk is on its way to the
     * device. Every copy started has been waited for when this returns, failed or not: the next request reuses the
     * buffer.
     */
    private int fileToDevice(
        final Region file, final long fileAddress, final Region gpu, final long gpuAddress, final long length)
    {
        final int device = gpu.device();
        final long base = pinned.address();
        long chunk = Math.min(bounceSize, length);
        int half = 0;
        int status = storage.read(file.file(), file.offsetOf(fileAddress), base, chunk);
        boolean copying = false;
        try
        {
            for (long done = 0; status == TransferStatus.OK; )
            {
                deviceMemory.startCopy(device, gpu.daemonAddress(gpuAddress + done), base + half * (long)bounceSize,
                    chunk);
                copying = true;
                final long next = done + chunk;
                if (next == length)
                {
                    break;
                }
                final long nextChunk = Math.min(bounceSize, length - next);
                half ^= 1;
                status = storage.read(file.file(), file.offsetOf(fileAddress + next), base + half * (long)bounceSize,
                    nextChunk);
                copying = false;
                deviceMemory.awaitCopies(device); // the half it copied from is read into next
                done = next;
                chunk = nextChunk;
            }
            if (copying)
            {
                copying = false;
                deviceMemory.awaitCopies(device);
            }
            return status;
        }
        catch (final RuntimeException ex)
        {
            return deviceFailed(device, copying, length, gpu, ex);
        }
    }

    /**
     * Copy a chunk from the device into one half of the pinned buffer while the other half's chunk is written to
     * the file. Every copy started has been waited for when this returns.
     */
    private int deviceToFile(
        final Region gpu, final long gpuAddress, final Region file, final long fileAddress, final long length)
    {
        final int device = gpu.device();
        final long base = pinned.address();
        long chunk = Math.min(bounceSize, length);
        int half = 0;
        boolean copying = false;
        try
        {
            deviceMemory.copy(device, base, gpu.daemonAddress(gpuAddress), chunk);
            for (long done = 0; ; )
            {
                final long next = done + chunk;
                final long nextChunk = Math.min(bounceSize, length - next);
                if (nextChunk > 0)
                {
                    deviceMemory.startCopy(device, base + (half ^ 1) * (long)bounceSize,
                        gpu.daemonAddress(gpuAddress + next), nextChunk);
                    copying = true;
                }
                final int status = storage.write(file.file(), file.offsetOf(fileAddress + done),
                    base + half * (long)bounceSize, chunk);
                if (copying)
                {
                    copying = false;
                    deviceMemory.awaitCopies(device);
                }
                if (status != TransferStatus.OK || nextChunk <= 0)
                {
                    return status;
                }
                half ^= 1;
                done = next;
                chunk = nextChunk;
            }
        }
        catch (final RuntimeException ex)
        {
            return deviceFailed(device, copying, length, gpu, ex);
        }
    }

    /**
     * A device copy failed: the request fails; a copy still started is waited for before the buffer is reused.
     */
    private int deviceFailed(
        final int device, final boolean copying, final long length, final Region region, final RuntimeException ex)
    {
        LOG.warn("device copy of {} bytes with {} failed: {}", length, region, ex.getMessage());
        if (copying)
        {
            try
            {
                deviceMemory.awaitCopies(device);
            }
            catch (final RuntimeException again)
            {
                LOG.warn("waiting for the device's copies after a failure failed too: {}", again.getMessage());
            }
        }
        return TransferStatus.TRANSPORT_ERROR;
    }

    /**
     * @return the pinned pair of bounce buffers, allocated on first use; null where the runtime refused them (the
     * pageable bounce buffer serves then, one chunk at a time).
     */
    private MemorySegment pinned()
    {
        if (pinned == null && !pinnedRefused)
        {
            try
            {
                pinned = deviceMemory.allocatePinned(2L * bounceSize);
            }
            catch (final RuntimeException ex)
            {
                pinnedRefused = true;
                LOG.warn("no pinned bounce buffer ({}): GPU <-> file through pageable memory, one chunk at a time",
                    ex.getMessage());
            }
        }
        return pinned;
    }

    /**
     * Give back the pinned buffer (the worker's close).
     */
    void close()
    {
        final MemorySegment memory = pinned;
        if (memory != null)
        {
            pinned = null;
            try
            {
                deviceMemory.freePinned(memory);
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("cannot free the pinned bounce buffer: {}", ex.getMessage());
            }
        }
    }

    /**
     * Bring a chunk of process or device memory into the bounce buffer.
     */
    private int stage(final Region source, final long address, final long bounceAddress, final long chunk)
    {
        if (source.isProcess())
        {
            return processStatus(ProcessMemory.read(source.pid(), address, bounceAddress, chunk), source, chunk);
        }
        return deviceCopy(source.device(), bounceAddress, source.daemonAddress(address), chunk, source);
    }

    /**
     * Take a chunk from the bounce buffer to process or device memory.
     */
    private int land(final Region destination, final long address, final long bounceAddress, final long chunk)
    {
        if (destination.isProcess())
        {
            return processStatus(ProcessMemory.write(destination.pid(), address, bounceAddress, chunk), destination,
                chunk);
        }
        return deviceCopy(destination.device(), destination.daemonAddress(address), bounceAddress, chunk, destination);
    }

    private int deviceCopy(
        final int device, final long destination, final long source, final long length, final Region region)
    {
        try
        {
            deviceMemory.copy(device, destination, source, length);
            return TransferStatus.OK;
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("device copy of {} bytes with {} failed: {}", length, region, ex.getMessage());
            return TransferStatus.TRANSPORT_ERROR;
        }
    }

    private static int processStatus(final int errno, final Region region, final long length)
    {
        if (errno == 0)
        {
            return TransferStatus.OK;
        }
        // EFAULT is the client's own doing (it unmapped registered memory); anything else is worth a look
        if (errno == Errno.EFAULT)
        {
            LOG.debug("process_vm copy of {} bytes with {} failed: EFAULT", length, region);
        }
        else
        {
            LOG.warn("process_vm copy of {} bytes with {} failed: {}", length, region, Errno.name(errno));
        }
        return TransferStatus.MEMORY_FAULT;
    }

    private MemorySegment bounce()
    {
        if (bounce == null)
        {
            // freed with the worker (an automatic arena): one per worker, for the life of the daemon
            bounce = Arena.ofAuto().allocate(bounceSize, 4096);
        }
        return bounce;
    }

    private int copyWithDevice(
        final Region source,
        final long sourceAddress,
        final Region destination,
        final long destinationAddress,
        final long length)
    {
        final int device = destination.isDevice() ? destination.device() : source.device();
        try
        {
            deviceMemory.copy(device, destination.daemonAddress(destinationAddress), source.daemonAddress(sourceAddress),
                length);
            return TransferStatus.OK;
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("device copy of {} bytes from {} to {} failed: {}", length, source, destination, ex.getMessage());
            return TransferStatus.TRANSPORT_ERROR;
        }
    }
}
