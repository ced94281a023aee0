package io.xferd.daemon.journal;

/**
 * One journal record as the tools see it (decoded, allocated): the fields a record type does not have are 0.
 * Timestamps are CLOCK_MONOTONIC ns; {@link #epochNanos(long)} converts one to epoch ns.
 */
public record JournalEntry(
    int type,
    long epochOffsetNanos,
    long requestId,
    long traceId,
    int clientSlot,
    int opcode,
    int status,
    long length,
    long bytes,
    int peerId,
    int nicId,
    long submitNanos,
    long intakeNanos,
    long completeNanos,
    int sliceIndex,
    int sliceCount,
    long sentNanos,
    long ackNanos)
{
    public long epochNanos(final long monotonicNanos)
    {
        return monotonicNanos + epochOffsetNanos;
    }

    /**
     * @return the record's own time: completion, intake, ack or slicing, as epoch ns.
     */
    public long eventEpochNanos()
    {
        return epochNanos(switch (type)
        {
            case JournalRecordDescriptor.COMPLETED -> completeNanos;
            case JournalRecordDescriptor.SUBMITTED -> intakeNanos;
            case JournalRecordDescriptor.SLICE -> ackNanos;
            default -> sentNanos;
        });
    }
}
