package io.xferd.daemon.storage;

import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

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

    private static final Logger LOG = LoggerFactory.getLogger(StorageFile.class);
    private static final Object NO_PAGE_CACHE = new Object();

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
    // a read-only channel onto the file's pages for sendfile when they are always in memory (tmpfs), opened at the
    // first peer READ: NO_PAGE_CACHE when the file is not such a file (or cannot be reopened), null before the first
    // look. Closed with the region: close comes only after every borrow of the region ended
    private volatile Object pageCache;
    private boolean closed; // guarded by this
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

    /**
     * A channel to answer a peer's READ of this region from with {@code sendfile(2)}, when the file's pages are
     * always in memory: a file on tmpfs (its pages are the file, O_DIRECT or not; no read of it waits for a device).
     * A file on a device, buffered or not, has none: a read of it may wait for the device, and the storage stage keeps
     * many of those in flight. The channel is a second open file description of the file this region holds (reopened
     * through {@code /proc/self/fd}, never by a path a client names), without O_DIRECT so that {@code sendfile} reads
     * the page cache; made once per region, shared by every connection (position-based reads only), closed with it.
     *
     * @return the channel, or null when this region's READs go to the storage stage.
     */
    public FileChannel pageCacheChannel()
    {
        Object known = pageCache;
        if (known == null)
        {
            synchronized (this)
            {
                known = pageCache;
                if (known == null)
                {
                    known = closed ? NO_PAGE_CACHE : openPageCache();
                    pageCache = known;
                }
            }
        }
        return known == NO_PAGE_CACHE ? null : (FileChannel)known;
    }

    private Object openPageCache()
    {
        if (!FILE.equals(label))
        {
            return NO_PAGE_CACHE; // a block device: its size is not fstat's, and its reads are the stage's
        }
        try
        {
            if (FileIo.fileSystemType(fd) != FileIo.TMPFS_MAGIC)
            {
                return NO_PAGE_CACHE;
            }
            return FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ);
        }
        catch (final IOException | NativeException | SecurityException ex)
        {
            LOG.debug("{} cannot be reopened for sendfile ({}): its READs go through the storage stage", this,
                ex.toString());
            return NO_PAGE_CACHE;
        }
    }

    public void close()
    {
        synchronized (this)
        {
            closed = true;
            if (pageCache instanceof FileChannel channel)
            {
                try
                {
                    channel.close();
                }
                catch (final IOException ignore)
                {
                    // read-only: nothing is lost
                }
            }
            pageCache = NO_PAGE_CACHE;
        }
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
