package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * One storage region's counters in the cnc file, so that {@code xferd status} and the metrics endpoint list every
 * storage region (registered by a client, or a configured {@code storage_segments} entry) with its bytes and errors
 * while it exists. Each is labelled {@code "storage <segment> 0x<address> <file|nvme> read|written|errors"} and typed
 * by what it counts; freed with the region.
 */
public final class StorageCounters implements AutoCloseable
{
    /** Counter type of the bytes read from a region's file (READs into memory). */
    public static final int READ_TYPE_ID = 5;
    /** Counter type of the bytes written into a region's file. */
    public static final int WRITTEN_TYPE_ID = 6;
    /** Counter type of a region's failed requests (typed storage statuses). */
    public static final int ERRORS_TYPE_ID = 7;
    public static final String PREFIX = "storage ";

    private final AtomicCounter read;
    private final AtomicCounter written;
    private final AtomicCounter errors;

    private StorageCounters(final AtomicCounter read, final AtomicCounter written, final AtomicCounter errors)
    {
        this.read = read;
        this.written = written;
        this.errors = errors;
    }

    /**
     * Allocates the counters of {@code file} and attaches them to it (control path). When the cnc file has no room
     * left (every slot held by other regions and peer paths), the region stays uncounted: a full counter store must
     * never refuse a registration or stop the daemon.
     *
     * @return false when the region is left uncounted.
     */
    public static boolean attach(
        final SystemCounters counters, final StorageFile file, final String segment, final long address)
    {
        final String name = PREFIX + segment + " 0x" + Long.toHexString(address) + " " + file.label();
        AtomicCounter read = null;
        AtomicCounter written = null;
        try
        {
            read = counters.newCounter(name + " read", READ_TYPE_ID);
            written = counters.newCounter(name + " written", WRITTEN_TYPE_ID);
            file.counters(new StorageCounters(read, written, counters.newCounter(name + " errors", ERRORS_TYPE_ID)));
            return true;
        }
        catch (final IllegalStateException full)
        {
            if (read != null)
            {
                read.close();
            }
            if (written != null)
            {
                written.close();
            }
            return false;
        }
    }

    /**
     * @return true for the type of a storage region's counter.
     */
    public static boolean isStorageType(final int typeId)
    {
        return typeId >= READ_TYPE_ID && typeId <= ERRORS_TYPE_ID;
    }

    /**
     * @return the region's part of a counter's label ({@code "<segment> 0x<address> <file|nvme>"}), or null for a
     * label of another form.
     */
    public static String regionOf(final String label)
    {
        final int end = label.lastIndexOf(' ');
        return label.startsWith(PREFIX) && end > PREFIX.length() ? label.substring(PREFIX.length(), end) : null;
    }

    void onCompleted(final boolean write, final long bytes, final boolean ok)
    {
        if (ok)
        {
            (write ? written : read).getAndAdd(bytes);
        }
        else
        {
            errors.increment();
        }
    }

    @Override
    public void close()
    {
        read.close();
        written.close();
        errors.close();
    }
}
