package io.xferd.daemon.transport;

/**
 * A segment of another daemon as this daemon knows it: the link to that daemon, the owner daemon's handle for
 * the segment and the epoch it was valid in. Immutable; a re-opened segment gets a new entry.
 */
public record RemoteSegment(String name, RemotePeer link, long remoteHandle, long epoch, SegmentDescriptor descriptor)
{
    /**
     * @return the owner's preferred NICs for the memory at {@code address} (from its published topology matrix
     * and the location of the region holding it), or null when it published none. Allocation-free.
     */
    public java.util.List<String> preferredNicsFor(final long address)
    {
        if (descriptor == null || descriptor.priorityMatrix() == null || descriptor.buffers() == null)
        {
            return null;
        }
        for (final SegmentDescriptor.Buffer buffer : descriptor.buffers())
        {
            if (address >= buffer.address() && address - buffer.address() < buffer.length())
            {
                final java.util.List<java.util.List<String>> row = descriptor.priorityMatrix().get(buffer.location());
                return row == null || row.isEmpty() ? null : row.get(0);
            }
        }
        return null;
    }

    /**
     * @return true when [address, address + length) lies in one buffer the owner described when the segment was
     * opened: a transfer of that range is one the owner can take whole. Allocation-free.
     */
    public boolean isOneBuffer(final long address, final long length)
    {
        final java.util.List<SegmentDescriptor.Buffer> buffers = descriptor == null ? null : descriptor.buffers();
        if (buffers == null)
        {
            return false;
        }
        for (int i = 0, n = buffers.size(); i < n; i++)
        {
            if (buffers.get(i).contains(address, length))
            {
                return true;
            }
        }
        return false;
    }
}
