package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;

/**
 * The local copy of one request between two borrowed regions, by the kind of memory on each side: host to host is
 * one {@link MemorySegment#copy} between the mappings, as fast as before GPU memory existed (the kind is checked
 * once per request, never per byte); anything touching device memory goes through {@link DeviceMemory}, issued on
 * the device of the GPU side. A failed device copy fails that request alone.
 */
final class RegionCopier
{
    private static final Logger LOG = LoggerFactory.getLogger(RegionCopier.class);

    private final DeviceMemory deviceMemory;

    RegionCopier(final DeviceMemory deviceMemory)
    {
        this.deviceMemory = deviceMemory;
    }

    /**
     * WRITE copies local to target, READ target to local.
     *
     * @return {@link TransferStatus#OK}, or {@link TransferStatus#TRANSPORT_ERROR} when the device copy failed.
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
        if (source.isDevice() | destination.isDevice())
        {
            return copyWithDevice(source, sourceAddress, destination, destinationAddress, length);
        }
        MemorySegment.copy(source.mapping(), source.offsetOf(sourceAddress),
            destination.mapping(), destination.offsetOf(destinationAddress), length);
        return TransferStatus.OK;
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
