package io.xferd.client;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.SubmitRequestFlyweight;

import java.util.Arrays;

/**
 * Many requests with one opcode and one target segment, submitted as ONE record and answered by ONE completion
 * ({@link XferClient#submitBatch}): status OK only when every entry landed, else the status of the lowest-index
 * entry that failed; a notify attached to a WRITE batch reaches the target's owner once every entry landed.
 * Reusable: {@link #reset} it and add entries again; it grows to the largest batch it held, then allocates nothing.
 */
public final class TransferBatch
{
    private int opcode = Opcode.WRITE;
    private long segment;
    private long traceId;
    private byte[] notify;
    private int count;
    private long[] localAddresses;
    private long[] targetAddresses;
    private long[] lengths;

    public TransferBatch(final int initialCapacity)
    {
        final int capacity = Math.max(1, initialCapacity);
        localAddresses = new long[capacity];
        targetAddresses = new long[capacity];
        lengths = new long[capacity];
    }

    /**
     * Start over with no entries, for {@code opcode} ({@link Opcode#READ} or {@link Opcode#WRITE}) into
     * {@code segment}; clears the notify and trace id.
     */
    public TransferBatch reset(final int opcode, final long segment)
    {
        this.opcode = opcode;
        this.segment = segment;
        this.traceId = 0;
        this.notify = null;
        this.count = 0;
        return this;
    }

    /**
     * Add an entry: {@code length} bytes between this client's {@code localAddress} and the target's
     * {@code targetAddress}.
     */
    public TransferBatch add(final long localAddress, final long targetAddress, final long length)
    {
        if (count == lengths.length)
        {
            final int capacity = count * 2;
            localAddresses = Arrays.copyOf(localAddresses, capacity);
            targetAddresses = Arrays.copyOf(targetAddresses, capacity);
            lengths = Arrays.copyOf(lengths, capacity);
        }
        localAddresses[count] = localAddress;
        targetAddresses[count] = targetAddress;
        lengths[count] = length;
        count++;
        return this;
    }

    /**
     * Attach a message (up to {@value SubmitRequestFlyweight#MAX_NOTIFY_LENGTH} bytes) for the target's owner,
     * delivered once every entry of a WRITE batch landed, never if one failed.
     */
    public TransferBatch notify(final byte[] message)
    {
        if (message != null && message.length > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH)
        {
            throw new IllegalArgumentException("notify message longer than " +
                SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + " bytes: " + message.length);
        }
        this.notify = message;
        return this;
    }

    public TransferBatch traceId(final long traceId)
    {
        this.traceId = traceId;
        return this;
    }

    public int opcode()
    {
        return opcode;
    }

    public long segment()
    {
        return segment;
    }

    public long traceId()
    {
        return traceId;
    }

    public byte[] notifyMessage()
    {
        return notify;
    }

    public int size()
    {
        return count;
    }

    public long localAddress(final int index)
    {
        return localAddresses[index];
    }

    public long targetAddress(final int index)
    {
        return targetAddresses[index];
    }

    public long length(final int index)
    {
        return lengths[index];
    }

    /**
     * @return the sum of the entries' lengths (what a successful batch reports as bytes transferred).
     */
    public long totalLength()
    {
        long total = 0;
        for (int i = 0; i < count; i++)
        {
            total += lengths[i];
        }
        return total;
    }
}
