package io.xferd.daemon.memory;

/**
 * A client's GPU allocation as the daemon opened it from its CUDA IPC handle: the device, the base address in the
 * daemon, and how many registered ranges use it. A handle can be opened only once per process, so ranges of the same
 * allocation share one; it is closed when the last of them is freed. Owned by the control conductor's thread.
 */
public final class DeviceAllocation
{
    private final Object handle;
    private final int device;
    private final long baseAddress;
    private final long size;
    private int ranges;

    /**
     * @param handle what identifies the allocation (the IPC handle), with value equality.
     * @param size   in bytes, or -1 when the runtime cannot say.
     */
    public DeviceAllocation(final Object handle, final int device, final long baseAddress, final long size)
    {
        this.handle = handle;
        this.device = device;
        this.baseAddress = baseAddress;
        this.size = size;
    }

    public Object handle()
    {
        return handle;
    }

    public int device()
    {
        return device;
    }

    public long baseAddress()
    {
        return baseAddress;
    }

    /**
     * @return the allocation's size in bytes, or -1 when unknown.
     */
    public long size()
    {
        return size;
    }

    /**
     * @return true when [offset, offset + length) lies inside the allocation, or its size is unknown.
     */
    public boolean holds(final long offset, final long length)
    {
        return size < 0 || (offset >= 0 && length >= 0 && offset <= size - length);
    }

    public void addRange()
    {
        ranges++;
    }

    /**
     * @return true when no range uses the allocation any more.
     */
    public boolean removeRange()
    {
        return --ranges == 0;
    }

    @Override
    public String toString()
    {
        return "DeviceAllocation[device " + device + " base 0x" + Long.toHexString(baseAddress) +
            (size >= 0 ? " size " + size : "") + ", " + ranges + " ranges]";
    }
}
