package io.xferd.daemon.transport.tcp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How much one connection keeps in flight (sent, not yet answered), in slices and in bytes. The bytes matter for
 * order: whatever is in flight sits in this side's socket buffer, on the wire, in the peer's receive buffer or in
 * the peer's hands, and a slice queued now waits behind all of it whatever {@link SliceScheduler} decides. Without a
 * bound in bytes, 64 slices of 512 KiB (32 MiB a connection) let a short prompt wait tens of milliseconds behind a
 * long one; the bound keeps that queue to a few milliseconds of the wire while still covering the peer's answer
 * batches, so the pipe never runs dry.
 * <p>
 * A full window reopens only once a refill's worth has left it, so that the sender then writes back to back instead
 * of once per answer. The sender adds, any thread that takes a slice out of flight (the receiver, whoever fails
 * them) removes.
 */
final class SendWindow
{
    private final int maxSlices;
    private final long maxBytes;
    private final int reopenSlices;
    private final long reopenBytes;
    private final AtomicLong bytes = new AtomicLong();

    /**
     * @param maxSlices    at most this many slices in flight.
     * @param maxBytes     at most this many bytes in flight: a slice may still be sent while fewer are, so a slice
     *                     larger than this goes alone.
     * @param refillSlices a full window reopens once this many slices have left it.
     * @param refillBytes  ... and once this many bytes have.
     */
    SendWindow(final int maxSlices, final long maxBytes, final int refillSlices, final long refillBytes)
    {
        if (maxSlices <= 0 || refillSlices <= 0 || refillSlices > maxSlices || maxBytes <= 0 || refillBytes <= 0 ||
            refillBytes > maxBytes)
        {
            throw new IllegalArgumentException("window " + maxSlices + " slices / " + maxBytes + " bytes, refill " +
                refillSlices + " / " + refillBytes);
        }
        this.maxSlices = maxSlices;
        this.maxBytes = maxBytes;
        this.reopenSlices = maxSlices - refillSlices;
        this.reopenBytes = maxBytes - refillBytes;
    }

    /**
     * @param slicesInFlight how many slices are in flight now.
     * @return true when no further slice may be sent before some are answered.
     */
    boolean isFull(final int slicesInFlight)
    {
        return slicesInFlight >= maxSlices || bytes.get() >= maxBytes;
    }

    /**
     * @param slicesInFlight how many slices are in flight now.
     * @return true when a full window has drained by a refill's worth (a sender waiting on it may go on).
     */
    boolean hasReopened(final int slicesInFlight)
    {
        return slicesInFlight <= reopenSlices && bytes.get() <= reopenBytes;
    }

    /**
     * A slice of {@code length} bytes went in flight.
     */
    void sent(final long length)
    {
        bytes.getAndAdd(length);
    }

    /**
     * A slice of {@code length} bytes left flight (answered or failed).
     */
    void left(final long length)
    {
        bytes.getAndAdd(-length);
    }

    /**
     * @return bytes in flight now.
     */
    long bytesInFlight()
    {
        return bytes.get();
    }
}
