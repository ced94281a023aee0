package io.xferd.daemon.storage;

import io.xferd.nativebindings.libc.FileIo;

/**
 * The open file behind one storage region: the descriptor the client passed (the daemon never opens a path a
 * client names), where the region starts in the file, and how it is written. Closed with its region.
 */
public final class StorageFile
{
    /** The label of a regular file in the journal, metrics and status. */
    public static final String FILE = "file";
    /** The label of a block device (an NVMe namespace, in the deployments this is for). */
    public static final String NVME = "nvme";
    /** O_DIRECT needs offsets, lengths and buffers aligned to the logical block; 4 KiB covers 512e and 4Kn. */
    public static final int BLOCK = 4096;

    private final int fd;
    private final long fileOffset;
    private final long length;
    private final boolean direct;
    private final boolean sync;
    private final String label;
    private final long device;
    // agent thread only (StorageStage): an fdatasync of this file is in flight, later sync writes wait for the next
    boolean syncInFlight;
    // agent thread only: the errno of a failed fdatasync, sticky. The kernel reports a writeback error once per open
    // file, and the failed pages are no longer dirty: a later fdatasync may return 0 for bytes that never landed
    int syncErrno;
    // agent thread only: the file's size when last looked at (lseek), and the stage's batch that looked
    long knownSize = -1;
    long sizeCheckedBatch = -1;
    // this region's counters in the cnc file; null when not counted (set before the region is published)
    private StorageCounters counters;
    // serialises the read-modify-write of partly written blocks on an O_DIRECT file (edges only; see StorageIo)
    private final Object edgeLock = new Object();

    public StorageFile(
        final int fd, final long fileOffset, final long length, final boolean direct, final boolean sync,
        final String label)
    {
        this(fd, fileOffset, length, direct, sync, label, 0);
    }

    /**
     * @param device the device the bytes live on ({@code FileStatus#device()}): requests to one device share its
     *               queue in the {@link StorageStage}.
     */
    public StorageFile(
        final int fd, final long fileOffset, final long length, final boolean direct, final boolean sync,
        final String label, final long device)
    {
        this.device = device;
        this.fd = fd;
        this.fileOffset = fileOffset;
        this.length = length;
        this.direct = direct;
        this.sync = sync;
        this.label = label;
    }

    public long device()
    {
        return device;
    }

    public int fd()
    {
        return fd;
    }

    /**
     * @return where the region's first byte lies in the file.
     */
    public long fileOffset()
    {
        return fileOffset;
    }

    public long length()
    {
        return length;
    }

    /**
     * @return the file offset just past the region: the file must be at least this long.
     */
    public long end()
    {
        return fileOffset + length;
    }

    /**
     * @return true when the descriptor has O_DIRECT (the page cache is bypassed; a completed write is on the device).
     */
    public boolean direct()
    {
        return direct;
    }

    /**
     * @return true when every WRITE ends with an fdatasync before it completes.
     */
    public boolean sync()
    {
        return sync;
    }

    /**
     * @return {@link #FILE} or {@link #NVME}.
     */
    public String label()
    {
        return label;
    }

    /**
     * Counts this region's bytes and errors from now on (before the region is published; closed with it).
     */
    public void counters(final StorageCounters counters)
    {
        this.counters = counters;
    }

    /**
     * One request of this region ended (any thread that served it, the stage's or a peer connection's): its
     * bytes, or an error.
     */
    public void onCompleted(final boolean write, final long bytes, final boolean ok)
    {
        final StorageCounters counters = this.counters;
        if (counters != null)
        {
            counters.onCompleted(write, bytes, ok);
        }
    }

    Object edgeLock()
    {
        return edgeLock;
    }

    /**
     * @return what {@code xferd status} shows of it: {@code "file offset 0, direct, sync"}.
     */
    public String describe()
    {
        return "file offset " + fileOffset + (direct ? ", direct" : ", buffered") + (sync ? ", sync" : "");
    }

    public void close()
    {
        FileIo.close(fd);
        if (counters != null)
        {
            counters.close();
        }
    }

    @Override
    public String toString()
    {
        return label + "[fd " + fd + " @" + fileOffset + "+" + length + (direct ? " direct" : " buffered") +
            (sync ? " sync" : "") + "]";
    }
}
