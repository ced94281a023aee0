package io.xferd.ipc;

/**
 * The daemon's system counters in the cnc file's counters buffers, allocated in this order at start, so
 * counter id == ordinal. Type id {@link #TYPE_ID}; the label is {@link #label()}. Tools read them with
 * Agrona's {@link org.agrona.concurrent.status.CountersReader}.
 */
public enum SystemCounter
{
    CLIENTS_CONNECTED("clients connected"),
    CLIENTS_DISCONNECTED("clients disconnected"),
    REQUESTS_SUBMITTED("requests submitted"),
    REQUESTS_COMPLETED("requests completed ok"),
    REQUESTS_FAILED("requests failed"),
    BYTES_READ("bytes moved by READ"),
    BYTES_WRITTEN("bytes moved by WRITE"),
    MALFORMED_RECORDS("malformed ring records"),
    CLIENTS_CUT_OFF("clients cut off for breaking the ring protocol"),
    NOTIFICATIONS_DELIVERED("notifications delivered"),
    NOTIFICATIONS_DROPPED("notifications dropped (receiver ring full)"),
    REGISTERED_BYTES("registered bytes"),
    REGIONS_REGISTERED("registered regions"),
    PIPELINE_BACKPRESSURE("intake stalls on a full pipeline"),
    PEER_CONNECTIONS_IN("peer connections accepted"),
    PEER_CONNECTIONS_OUT("peer connections opened"),
    PEER_CONNECTION_FAILURES("peer connections lost or refused"),
    REMOTE_ACCESS_REFUSED("remote accesses refused (unknown segment, out of bounds)"),
    REMOTE_BYTES_SENT("bytes sent to peers"),
    REMOTE_BYTES_RECEIVED("bytes received from peers"),
    SLICES_TIMED_OUT("slices timed out"),
    JOURNAL_DROPPED("journal records dropped (journal ring full)"),
    STORAGE_BYTES_READ("bytes read from storage regions"),
    STORAGE_BYTES_WRITTEN("bytes written to storage regions"),
    STORAGE_ERRORS("storage operations failed"),
    MEMORY_FAULTS("copies that faulted on registered memory (a file shrunk under its mapping)"),
    JOURNAL_WRITE_FAILURES("journal records not written (journal files could not be written: file system full?)"),
    STORAGE_SYNCS("fdatasync calls on storage regions (one per batch of sync writes to a file)"),
    REQUESTS_COALESCED("requests merged with adjacent ones into one transfer");

    public static final int TYPE_ID = 1;

    private final String label;

    SystemCounter(final String label)
    {
        this.label = label;
    }

    public String label()
    {
        return label;
    }

    public int id()
    {
        return ordinal();
    }
}
