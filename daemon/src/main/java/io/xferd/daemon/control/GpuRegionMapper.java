package io.xferd.daemon.control;

import io.xferd.daemon.memory.DeviceAllocation;
import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.nativebindings.Availability;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Opens the GPU memory a client handed over as a CUDA IPC handle and closes it again: the device counterpart of
 * {@link RegionMapper}. A handle is opened once however many ranges of its allocation are registered (the runtime
 * maps an allocation once per process), and closed when the last of them is freed. Runs on the conductor's thread.
 */
final class GpuRegionMapper
{
    private static final Logger LOG = LoggerFactory.getLogger(GpuRegionMapper.class);

    private final DeviceMemory deviceMemory;
    private final Map<ByteBuffer, DeviceAllocation> openAllocations = new HashMap<>();
    private boolean unavailableLogged;

    GpuRegionMapper(final DeviceMemory deviceMemory)
    {
        this.deviceMemory = deviceMemory;
    }

    /**
     * @throws RegistrationRefusedException with CUDA_UNAVAILABLE when there is no usable GPU runtime, MAP_FAILED when
     *                                      the device is not found or the handle does not open.
     */
    Region map(final GpuMemoryRegistration registration)
    {
        final Availability availability = deviceMemory.availability();
        if (!availability.isAvailable())
        {
            if (!unavailableLogged)
            {
                unavailableLogged = true;
                LOG.warn("GPU memory offered by a client but not served: {} (logged once; host memory is unaffected)",
                    availability);
            }
            throw new RegistrationRefusedException(ControlError.CUDA_UNAVAILABLE,
                "this daemon cannot serve GPU memory: " + availability);
        }
        final int device = device(registration);
        final ByteBuffer key = ByteBuffer.wrap(registration.ipcHandle().clone());
        DeviceAllocation allocation = openAllocations.get(key);
        if (allocation == null)
        {
            allocation = open(device, key, registration.ipcHandle());
        }
        allocation.addRange();
        if (!allocation.holds(registration.allocationOffset(), registration.length()))
        {
            if (allocation.removeRange())
            {
                close(allocation);
            }
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT, "range of " +
                registration.length() + " bytes at offset " + registration.allocationOffset() +
                " ends beyond its allocation of " + allocation.size() + " bytes");
        }
        // the daemon's own cuda:N, as its topology numbers GPUs: the client's may differ (CUDA_VISIBLE_DEVICES)
        return Region.onDevice(registration.devicePointer(), registration.length(), "cuda:" + device,
            allocation, registration.allocationOffset());
    }

    /**
     * Free a device region nothing borrows any more: closes its allocation when it was the last range of it.
     */
    void unmap(final Region region)
    {
        final DeviceAllocation allocation = region.allocation();
        if (allocation.removeRange())
        {
            close(allocation);
        }
    }

    /**
     * Open a handle not open yet, and ask its allocation's size.
     */
    private DeviceAllocation open(final int device, final ByteBuffer key, final byte[] ipcHandle)
    {
        final long base;
        try
        {
            base = deviceMemory.open(device, ipcHandle);
        }
        catch (final RuntimeException ex)
        {
            throw new RegistrationRefusedException(ControlError.MAP_FAILED,
                "cannot open the CUDA IPC handle on device " + device + ": " + ex.getMessage());
        }
        long size;
        try
        {
            size = deviceMemory.allocationSize(device, base);
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("size of the allocation at 0x{} unknown, its ranges unchecked: {}", Long.toHexString(base),
                ex.getMessage());
            size = -1;
        }
        final DeviceAllocation allocation = new DeviceAllocation(key, device, base, size);
        openAllocations.put(key, allocation);
        return allocation;
    }

    private void close(final DeviceAllocation allocation)
    {
        openAllocations.remove(allocation.handle());
        try
        {
            deviceMemory.close(allocation.device(), allocation.baseAddress());
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("closing {} failed: {}", allocation, ex.getMessage());
        }
    }

    int openAllocations()
    {
        return openAllocations.size();
    }

    private int device(final GpuMemoryRegistration registration)
    {
        try
        {
            if (!registration.pciBusId().isEmpty())
            {
                final int device = deviceMemory.deviceOf(registration.pciBusId());
                if (device < 0)
                {
                    throw new RegistrationRefusedException(ControlError.MAP_FAILED,
                        "no CUDA device with PCI bus id " + registration.pciBusId() + " on this daemon's host");
                }
                return device;
            }
            final int device = GpuMemoryRegistration.cudaOrdinal(registration.location());
            final int count = deviceMemory.deviceCount();
            if (device >= count)
            {
                throw new RegistrationRefusedException(ControlError.MAP_FAILED,
                    registration.location() + ": this daemon sees " + count + " CUDA devices");
            }
            return device;
        }
        catch (final RegistrationRefusedException ex)
        {
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            throw new RegistrationRefusedException(ControlError.MAP_FAILED, "cannot find the device: " + ex.getMessage());
        }
    }
}
