package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.storage.StorageFile;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One peer connection's read-only channels onto the file regions whose bytes are always in memory: files on tmpfs
 * (their pages are the file, O_DIRECT or not; no read of them ever waits for a device). A peer's READ of such a file
 * is answered on the connection's thread with {@code sendfile(2)} from those pages into the socket: no copy into a
 * buffer of ours, no trip through the storage stage and back. A file on a device, buffered or not, is not one of
 * them: a read of it may wait for the device, and the stage keeps many of those in flight where this thread would
 * wait for each in turn.
 * <p>
 * The channel is a second open file description of the file the region holds (reopened through
 * {@code /proc/self/fd}, the way the region's O_DIRECT description is made, never by a path a client names), without
 * O_DIRECT so that {@code sendfile} reads the page cache. Made once per file and connection; a file that cannot be
 * reopened is remembered as such and served by the stage.
 */
final class PageCacheFiles implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PageCacheFiles.class);
    // files one connection keeps a channel open for; past this, all are closed and reopened as they are read
    static final int MAX_FILES = 16;
    private static final FileChannel NOT_CACHED = null;

    private final Map<StorageFile, FileChannel> channels = new IdentityHashMap<>();

    /**
     * @return a channel to send {@code file}'s bytes from with {@code sendfile}, or null when its READs go to the
     * storage stage (not on tmpfs, a block device, or it cannot be reopened).
     */
    FileChannel channelFor(final StorageFile file)
    {
        final FileChannel known = channels.get(file);
        if (known != null || channels.containsKey(file))
        {
            return known;
        }
        if (channels.size() >= MAX_FILES)
        {
            close();
        }
        final FileChannel opened = open(file);
        channels.put(file, opened);
        return opened;
    }

    private static FileChannel open(final StorageFile file)
    {
        if (!StorageFile.FILE.equals(file.label()))
        {
            return NOT_CACHED; // a block device: its size is not fstat's, and its reads are the stage's
        }
        try
        {
            if (FileIo.fileSystemType(file.fd()) != FileIo.TMPFS_MAGIC)
            {
                return NOT_CACHED;
            }
            return FileChannel.open(Path.of("/proc/self/fd/" + file.fd()), StandardOpenOption.READ);
        }
        catch (final IOException | NativeException | SecurityException ex)
        {
            LOG.debug("{} cannot be reopened for sendfile ({}): its READs go through the storage stage", file,
                ex.toString());
            return NOT_CACHED;
        }
    }

    @Override
    public void close()
    {
        for (final FileChannel channel : channels.values())
        {
            if (channel != null)
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
        }
        channels.clear();
    }
}
