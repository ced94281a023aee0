package io.xferd.daemon.control;

import io.xferd.daemon.files.FileModes;
import io.xferd.ipc.CncFileDescriptor;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.LockSupport;

/**
 * The daemon's directory: claimed with a lock file, checked for a daemon that is still alive (by its heartbeat
 * in {@code cnc.dat}, never by pid: pids are reused), cleaned of what a crashed daemon left, and holding the new
 * cnc file. Removed again on a clean shutdown.
 */
public final class RuntimeDirectory implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(RuntimeDirectory.class);

    private final Path directory;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private MappedByteBuffer cncMapping;
    private UnsafeBuffer cnc;

    private RuntimeDirectory(final Path directory, final FileChannel lockChannel, final FileLock lock)
    {
        this.directory = directory;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /**
     * Claim a directory for this daemon.
     *
     * @throws DaemonAlreadyRunningException when a live daemon holds it.
     */
    public static RuntimeDirectory claim(final Path directory, final long livenessTimeoutMs)
    {
        try
        {
            Files.createDirectories(directory);
            FileModes.restrictDirectory(directory);
            final FileChannel channel = FileChannel.open(directory.resolve(CncFileDescriptor.LOCK_FILE),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileModes.set(directory.resolve(CncFileDescriptor.LOCK_FILE), FileModes.GROUP_READABLE);
            FileLock lock;
            try
            {
                lock = channel.tryLock();
            }
            catch (final java.nio.channels.OverlappingFileLockException ex)
            {
                lock = null;
            }
            if (lock == null)
            {
                channel.close();
                throw new DaemonAlreadyRunningException("another xferd daemon is running in " + directory +
                    describeExisting(directory) + "; stop it first or use --dir");
            }
            final RuntimeDirectory runtime = new RuntimeDirectory(directory, channel, lock);
            runtime.takeOverIfStale(livenessTimeoutMs);
            return runtime;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot use directory " + directory, ex);
        }
    }

    private void takeOverIfStale(final long livenessTimeoutMs) throws IOException
    {
        final Path cncFile = directory.resolve(CncFileDescriptor.CNC_FILE);
        if (Files.exists(cncFile))
        {
            final long ageMs = heartbeatAgeMs(cncFile);
            // holding the lock, a fresh heartbeat is either a daemon that died within the liveness timeout (it
            // stops moving) or a live one whose lock file was deleted (it moves): wait, bounded, to tell which
            if (ageMs >= 0 && ageMs < livenessTimeoutMs && heartbeatMoves(cncFile, livenessTimeoutMs - ageMs))
            {
                close();
                throw new DaemonAlreadyRunningException("a live xferd daemon's heartbeat is " + ageMs +
                    " ms old in " + directory + describeExisting(directory) + "; stop it first or use --dir");
            }
            LOG.warn("taking over {} left by a daemon that stopped without cleaning up{}", directory,
                describeExisting(directory));
            Files.deleteIfExists(cncFile);
        }
        Files.deleteIfExists(directory.resolve(CncFileDescriptor.SOCKET_FILE));
    }

    /**
     * Create and map a new cnc file with its header written.
     */
    public UnsafeBuffer createCncFile(final int countersValuesLength, final long pid, final long livenessTimeoutMs)
    {
        final Path cncFile = directory.resolve(CncFileDescriptor.CNC_FILE);
        final long length = CncFileDescriptor.fileLength(countersValuesLength);
        cncMapping = IoUtil.mapNewFile(cncFile.toFile(), length, true);
        FileModes.set(cncFile, FileModes.GROUP_READABLE);
        cnc = new UnsafeBuffer(cncMapping);
        CncFileDescriptor.writeHeader(cnc, countersValuesLength, pid, System.currentTimeMillis(), livenessTimeoutMs);
        return cnc;
    }

    public Path directory()
    {
        return directory;
    }

    public Path socketPath()
    {
        return directory.resolve(CncFileDescriptor.SOCKET_FILE);
    }

    public Path cncPath()
    {
        return directory.resolve(CncFileDescriptor.CNC_FILE);
    }

    /**
     * Remove the files and release the lock. The cnc mapping stays valid for anyone who still has it mapped.
     */
    @Override
    public void close()
    {
        try
        {
            Files.deleteIfExists(socketPath());
            if (cncMapping != null)
            {
                Files.deleteIfExists(cncPath());
                IoUtil.unmap(cncMapping);
                cncMapping = null;
            }
            // the lock file stays: deleting it would let two daemons lock two different inodes
            if (lock.isValid())
            {
                lock.release();
            }
            lockChannel.close();
        }
        catch (final IOException ex)
        {
            LOG.warn("cleaning up {}: {}", directory, ex.toString());
        }
    }

    /**
     * @return true when the heartbeat in the cnc file changes within {@code waitMs}.
     */
    static boolean heartbeatMoves(final Path cncFile, final long waitMs)
    {
        try
        {
            final MappedByteBuffer mapped = IoUtil.mapExistingFile(cncFile.toFile(), "cnc");
            try
            {
                final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
                CncFileDescriptor.checkHeader(buffer);
                final long first = CncFileDescriptor.heartbeatMs(buffer);
                final long deadline = System.nanoTime() + waitMs * 1_000_000L;
                while (System.nanoTime() < deadline)
                {
                    if (CncFileDescriptor.heartbeatMs(buffer) != first)
                    {
                        return true;
                    }
                    LockSupport.parkNanos(10_000_000L);
                }
                return CncFileDescriptor.heartbeatMs(buffer) != first;
            }
            finally
            {
                IoUtil.unmap(mapped);
            }
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
    }

    /**
     * @return ms since the heartbeat in an existing cnc file, or -1 when it has none yet or cannot be read.
     */
    static long heartbeatAgeMs(final Path cncFile)
    {
        try
        {
            if (Files.size(cncFile) < CncFileDescriptor.HEADER_LENGTH)
            {
                return -1;
            }
            final MappedByteBuffer mapped = IoUtil.mapExistingFile(cncFile.toFile(), "cnc");
            try
            {
                final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
                CncFileDescriptor.checkHeader(buffer);
                final long heartbeat = CncFileDescriptor.heartbeatMs(buffer);
                return heartbeat == 0 ? -1 : Math.max(0, System.currentTimeMillis() - heartbeat);
            }
            finally
            {
                IoUtil.unmap(mapped);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }

    private static String describeExisting(final Path directory)
    {
        final Path cncFile = directory.resolve(CncFileDescriptor.CNC_FILE);
        try
        {
            if (!Files.exists(cncFile) || Files.size(cncFile) < CncFileDescriptor.HEADER_LENGTH)
            {
                return "";
            }
            final MappedByteBuffer mapped = IoUtil.mapExistingFile(cncFile.toFile(), "cnc");
            try
            {
                final UnsafeBuffer buffer = new UnsafeBuffer(mapped);
                CncFileDescriptor.checkHeader(buffer);
                final long heartbeat = CncFileDescriptor.heartbeatMs(buffer);
                return " (pid " + CncFileDescriptor.daemonPid(buffer) + ", last heartbeat " +
                    (heartbeat == 0 ? "never" : (System.currentTimeMillis() - heartbeat) + " ms ago") + ")";
            }
            finally
            {
                IoUtil.unmap(mapped);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            return "";
        }
    }
}
