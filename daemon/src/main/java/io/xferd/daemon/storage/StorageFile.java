package io.xferd.daemon.storage;

import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.MappedMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;

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
    // the region's bytes and the whole mapping under them when the file's pages are always in memory (tmpfs), mapped
    // at the first peer request: NO_PAGE_CACHE when the file is not such a file (or cannot be mapped), null before
    // the first look. Unmapped with the region: close comes only after every borrow of the region ended
    private volatile Object pageCache;
    // written before pageCache is published, read after it
    private boolean pageCacheWritable;
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
     * The region's bytes mapped shared, for a peer connection to send a READ's answer from and receive a WRITE's
     * payload into as it does a memory region's, when the file's pages are always in memory: a file on tmpfs (its
     * pages are the file, O_DIRECT or not; no access waits for a device, and a WRITE is in the file once its bytes
     * are in the pages, so there is nothing for an fdatasync to do). A file on a device, buffered or not, has none:
     * its reads may wait for the device, and the storage stage keeps many of those in flight.
     * <p>
     * System calls touch these bytes (the socket's read and write), and Java only to copy the few KiB of a WRITE's
     * payload read ahead with its header: should the file be truncated under the mapping, the call fails with
     * EFAULT, the copy with a memory fault the responder turns into an I/O error (either way the connection
     * closes, the daemon goes on). Mapped once per region at the first peer request, without populating (a sparse file keeps
     * its holes), read-only when the descriptor is (then {@link #pageCacheWritable()} is false); unmapped with
     * the region, which closes only after every borrow of it ended.
     *
     * @return the region's {@link #length()} bytes, or null when this region's requests go to the storage stage.
     */
    public MemorySegment pageCacheBytes()
    {
        Object known = pageCache;
        if (known == null)
        {
            synchronized (this)
            {
                known = pageCache;
                if (known == null)
                {
                    known = closed ? NO_PAGE_CACHE : mapPageCache();
                    pageCache = known;
                }
            }
        }
        return known == NO_PAGE_CACHE ? null : ((MemorySegment[])known)[0];
    }

    /**
     * @return true when {@link #pageCacheBytes()} may be written (the descriptor is read-write).
     */
    public boolean pageCacheWritable()
    {
        return pageCacheWritable;
    }

    private Object mapPageCache()
    {
        if (!FILE.equals(label))
        {
            return NO_PAGE_CACHE; // a block device: its size is not the file's, and its I/O is the stage's
        }
        try
        {
            if (FileIo.fileSystemType(fd) != FileIo.TMPFS_MAGIC)
            {
                return NO_PAGE_CACHE;
            }
            final int access = FileIo.accessMode(fd);
            if (access == FileIo.O_WRONLY)
            {
                return NO_PAGE_CACHE; // no mapping without read access
            }
            final long alignedOffset = fileOffset & ~(MappedMemory.PAGE_SIZE - 1); // mmap wants page multiples
            final long lead = fileOffset - alignedOffset;
            final MemorySegment whole = access == FileIo.O_RDWR ?
                MappedMemory.mapShared(fd, alignedOffset, lead + length) :
                MappedMemory.mapSharedReadOnly(fd, alignedOffset, lead + length);
            pageCacheWritable = access == FileIo.O_RDWR;
            return new MemorySegment[] {whole.asSlice(lead, length), whole};
        }
        catch (final NativeException ex)
        {
            LOG.debug("{} cannot be mapped ({}): its peer requests go through the storage stage", this,
                ex.toString());
            return NO_PAGE_CACHE;
        }
    }

    public void close()
    {
        synchronized (this)
        {
            closed = true;
            if (pageCache instanceof MemorySegment[] mapping)
            {
                MappedMemory.unmap(mapping[1]);
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
