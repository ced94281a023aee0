package io.xferd.client;

import io.xferd.ipc.Opcode;

/**
 * One request of a batch: move {@code length} bytes between this client's registered memory at
 * {@code localAddress} and the target segment's memory at {@code targetAddress} (the target owner's own
 * virtual address, as it registered it). Mutable so a hot loop can reuse one instance.
 */
public final class TransferRequest
{
    private int opcode;
    private long localAddress;
    private long segment;
    private long targetAddress;
    private long length;
    private long traceId;
    private byte[] notify;

    public static TransferRequest write(final long localAddress, final long segment, final long targetAddress,
        final long length)
    {
        return new TransferRequest().set(Opcode.WRITE, localAddress, segment, targetAddress, length);
    }

    public static TransferRequest read(final long localAddress, final long segment, final long targetAddress,
        final long length)
    {
        return new TransferRequest().set(Opcode.READ, localAddress, segment, targetAddress, length);
    }

    public TransferRequest set(
        final int opcode, final long localAddress, final long segment, final long targetAddress, final long length)
    {
        this.opcode = opcode;
        this.localAddress = localAddress;
        this.segment = segment;
        this.targetAddress = targetAddress;
        this.length = length;
        this.notify = null;
        this.traceId = 0;
        return this;
    }

    /**
     * Attach a short message (up to 256 bytes) that the target's owner receives once a WRITE landed.
     */
    public TransferRequest notify(final byte[] message)
    {
        this.notify = message;
        return this;
    }

    /**
     * An id of the caller's choosing that follows the request into the daemon's journal and logs.
     */
    public TransferRequest traceId(final long traceId)
    {
        this.traceId = traceId;
        return this;
    }

    public int opcode()
    {
        return opcode;
    }

    public long localAddress()
    {
        return localAddress;
    }

    public long segment()
    {
        return segment;
    }

    public long targetAddress()
    {
        return targetAddress;
    }

    public long length()
    {
        return length;
    }

    public long traceId()
    {
        return traceId;
    }

    public byte[] notifyMessage()
    {
        return notify;
    }
}
