package io.xferd.client;

import java.lang.foreign.MemorySegment;

/**
 * Memory the daemon can map: a memfd mapped into this process. Register ranges of it with
 * {@link XferClient#registerMemory}; the daemon then moves bytes in and out of these very pages.
 */
public final class SharedBuffer
{
    private final int fd;
    private final MemorySegment segment;

    SharedBuffer(final int fd, final MemorySegment segment)
    {
        this.fd = fd;
        this.segment = segment;
    }

    /**
     * @return this process's view of the memory; {@code segment().address()} is the address requests use.
     */
    public MemorySegment segment()
    {
        return segment;
    }

    public long address()
    {
        return segment.address();
    }

    public long length()
    {
        return segment.byteSize();
    }

    int fd()
    {
        return fd;
    }

    boolean contains(final long address, final long length)
    {
        return address >= address() && length <= length() && address - address() <= length() - length;
    }
}
