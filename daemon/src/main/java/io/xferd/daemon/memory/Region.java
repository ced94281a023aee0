package io.xferd.daemon.memory;

import io.xferd.daemon.storage.StorageFile;

import java.lang.foreign.MemorySegment;

/**
 * One registered range of a client's memory: the owner's own virtual address and length, and the daemon's
 * mapping of the same bytes. Requests name it by the owner's address; the daemon copies through the mapping.
 * <p>
 * Host memory is mapped (a {@link MemorySegment} the CPU copies through). Device memory ({@link #isDevice()}) is a
 * GPU allocation the daemon opened through a CUDA IPC handle: it has a device address instead, only a
 * {@link DeviceMemory} can copy through it, and its {@link #mapping()} is empty so that no host path can touch it.
 * <p>
 * Process memory ({@link #isProcess()}) is ordinary memory of the owner process (heap, anonymous, a numpy array)
 * that it did not share: the daemon reaches it only with {@code process_vm_readv}/{@code process_vm_writev} on the
 * owner's pid, at the owner's own addresses; it has no mapping either.
 * <p>
 * File memory ({@link #isFile()}) is a byte range of a file or block device the owner passed open: the daemon reaches
 * it only through {@link io.xferd.daemon.storage.StorageIo}; its owner address is a name, not memory.
 */
public final class Region extends RefCounted
{
    /** The {@link #device()} of host memory. */
    public static final int HOST = -1;

    private final long ownerAddress;
    private final long length;
    private final String location;
    private final MemorySegment mapping;
    private final MemorySegment wholeMapping;
    private final int device;
    private final long deviceAddress;
    private final DeviceAllocation allocation;
    private final int pid;
    private final StorageFile file;

    /**
     * @param mapping      the daemon's view of exactly the registered bytes.
     * @param wholeMapping what was mmapped (page aligned, may start before {@code mapping}); unmapped at the end.
     */
    public Region(
        final long ownerAddress,
        final long length,
        final String location,
        final MemorySegment mapping,
        final MemorySegment wholeMapping)
    {
        this.ownerAddress = ownerAddress;
        this.length = length;
        this.location = location;
        this.mapping = mapping;
        this.wholeMapping = wholeMapping;
        this.device = HOST;
        this.deviceAddress = 0;
        this.allocation = null;
        this.pid = 0;
        this.file = null;
    }

    private Region(final long ownerAddress, final long length, final String location, final int pid)
    {
        this.ownerAddress = ownerAddress;
        this.length = length;
        this.location = location;
        this.mapping = MemorySegment.NULL;
        this.wholeMapping = MemorySegment.NULL;
        this.device = HOST;
        this.deviceAddress = 0;
        this.allocation = null;
        this.pid = pid;
        this.file = null;
    }

    private Region(final long ownerAddress, final long length, final StorageFile file)
    {
        this.ownerAddress = ownerAddress;
        this.length = length;
        this.location = file.label();
        this.mapping = MemorySegment.NULL;
        this.wholeMapping = MemorySegment.NULL;
        this.device = HOST;
        this.deviceAddress = 0;
        this.allocation = null;
        this.pid = 0;
        this.file = file;
    }

    /**
     * A byte range of an open file or block device, named by the owner at {@code ownerAddress}; its location is the
     * file's label ({@code file} or {@code nvme}).
     */
    public static Region inFile(final long ownerAddress, final long length, final StorageFile file)
    {
        return new Region(ownerAddress, length, file);
    }

    public boolean isFile()
    {
        return file != null;
    }

    /**
     * @return the open file of a file region, else null.
     */
    public StorageFile file()
    {
        return file;
    }

    private Region(
        final long ownerAddress,
        final long length,
        final String location,
        final DeviceAllocation allocation,
        final long allocationOffset)
    {
        this.ownerAddress = ownerAddress;
        this.length = length;
        this.location = location;
        this.mapping = MemorySegment.NULL;
        this.wholeMapping = MemorySegment.NULL;
        this.device = allocation.device();
        this.deviceAddress = allocation.baseAddress() + allocationOffset;
        this.allocation = allocation;
        this.pid = 0;
        this.file = null;
    }

    /**
     * A range of a GPU allocation the daemon opened.
     *
     * @param allocationOffset where the range starts inside the allocation.
     */
    public static Region onDevice(
        final long ownerAddress,
        final long length,
        final String location,
        final DeviceAllocation allocation,
        final long allocationOffset)
    {
        return new Region(ownerAddress, length, location, allocation, allocationOffset);
    }

    /**
     * A range of ordinary memory of process {@code pid}, reached with process_vm_readv/writev.
     */
    public static Region inProcess(final long ownerAddress, final long length, final String location, final int pid)
    {
        if (pid <= 0)
        {
            throw new IllegalArgumentException("pid " + pid);
        }
        return new Region(ownerAddress, length, location, pid);
    }

    public boolean isDevice()
    {
        return device != HOST;
    }

    public boolean isProcess()
    {
        return pid != 0;
    }

    /**
     * @return true when {@link #mapping()} holds the bytes (host memory the daemon mapped); false for device,
     * process and file memory, which only their own copy paths reach.
     */
    public boolean isMapped()
    {
        return device == HOST && pid == 0 && file == null;
    }

    /**
     * @return the owner's pid for process memory, else 0.
     */
    public int pid()
    {
        return pid;
    }

    /**
     * @return the daemon's CUDA ordinal of the device holding this memory, or {@link #HOST}.
     */
    public int device()
    {
        return device;
    }

    /**
     * @return the opened GPU allocation this range lies in; null for host memory.
     */
    public DeviceAllocation allocation()
    {
        return allocation;
    }

    /**
     * @return the daemon's address of the byte the owner calls {@code address}: a device pointer for device memory,
     * the mapping's address for host memory (as {@code cudaMemcpyDefault} takes either).
     */
    public long daemonAddress(final long address)
    {
        return (device != HOST ? deviceAddress : mapping.address()) + (address - ownerAddress);
    }

    public long ownerAddress()
    {
        return ownerAddress;
    }

    public long length()
    {
        return length;
    }

    public String location()
    {
        return location;
    }

    public MemorySegment mapping()
    {
        return mapping;
    }

    public MemorySegment wholeMapping()
    {
        return wholeMapping;
    }

    /**
     * @return true when [address, address + length) lies inside this region; overflow safe.
     */
    public boolean contains(final long address, final long requestLength)
    {
        return address >= ownerAddress && requestLength <= length &&
            address - ownerAddress <= length - requestLength;
    }

    public long offsetOf(final long address)
    {
        return address - ownerAddress;
    }

    @Override
    public String toString()
    {
        return "Region[0x" + Long.toHexString(ownerAddress) + "+" + length + " " + location +
            (device != HOST ? " device " + device : "") + (pid != 0 ? " process " + pid : "") +
            (file != null ? " " + file : "") + "]";
    }
}
