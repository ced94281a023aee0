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
 * mapping. A failed device copy, process_vm call or file operation fails that request alone. One worker thread only.
 */
final class RegionCopier
{
    private static final Logger LOG = LoggerFactory.getLogger(RegionCopier.class);

    static final int DEFAULT_BOUNCE_SIZE = 1 << 20;

    private final DeviceMemory deviceMemory;
    private final int bounceSize;
    private final StorageIo storage;
    private MemorySegment bounce;

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
