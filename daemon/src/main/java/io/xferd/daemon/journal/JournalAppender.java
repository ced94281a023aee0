package io.xferd.daemon.journal;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static io.xferd.daemon.journal.JournalRecordDescriptor.NAME;

/**
 * Appends the journal's records to its Chronicle Queue and survives the file system under it filling up.
 * <p>
 * The queue's files are mapped: a write into a page that a full tmpfs ({@code /dev/shm}) cannot back raises SIGBUS,
 * which the JVM turns into an {@link InternalError} in the writing thread, and Chronicle's files are left
 * inconsistent by a write cut short (a queue reopened over them may write over earlier records). So writes stop
 * <em>before</em> that: with less than {@code minFreeBytes} free (checked every 10 ms) nothing is written. Should a
 * write fail anyway (a file system filled at once, an I/O error), the queue is closed and its current cycle file
 * kept aside as {@code <file>.damaged} (readable by Chronicle's own tools), and a fresh one is started.
 * <p>
 * Either way a failure episode begins: one WARN, every record meanwhile counted in {@code writeFailures} and not
 * written; it ends (one INFO with the number not written) at the first write that succeeds once space returns. The
 * metrics fed from the same records never stop.
 */
final class JournalAppender implements AutoCloseable
{
    /** The free space below which the journal does not write, by default. */
    static final long MIN_FREE_BYTES_DEFAULT = 1024 * 1024;
    static final String DAMAGED_SUFFIX = ".damaged";

    private static final Logger LOG = LoggerFactory.getLogger(JournalAppender.class);
    private static final long SPACE_CHECK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long REOPEN_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);

    private final Supplier<SingleChronicleQueue> opener;
    private final AtomicCounter writeFailures;
    private final long minFreeBytes;
    private final Path directory;
    private final FileStore fileStore;
    private SingleChronicleQueue queue;
    private ExcerptAppender appender;
    private long spaceCheckedAtNs;
    private long lastReopenAttemptNs;
    private long notWrittenInEpisode;
    /** Between the first record not written and the next one written. */
    private boolean inEpisode;
    /** Enough free space at the last check. */
    private boolean spaceLeft = true;
    /** False from a failed write until the queue is reopened. */
    private boolean open;

    /**
     * @param opener        opens the queue; called now and again after a failed write.
     * @param writeFailures counts the records that could not be written.
     * @param minFreeBytes  no writes with less free space than this in the journal's file system.
     */
    JournalAppender(
        final Supplier<SingleChronicleQueue> opener, final AtomicCounter writeFailures, final long minFreeBytes)
    {
        this.opener = opener;
        this.writeFailures = writeFailures;
        this.minFreeBytes = minFreeBytes;
        this.queue = opener.get();
        this.appender = queue.createAppender();
        this.directory = queue.file().toPath();
        try
        {
            this.fileStore = Files.getFileStore(directory);
        }
        catch (final IOException ex)
        {
            queue.close();
            throw new IllegalStateException("journal: cannot find the file system of " + directory, ex);
        }
        this.open = true;
    }

    /**
     * @return the open queue, or null after a failed write until it is reopened.
     */
    SingleChronicleQueue queue()
    {
        return open ? queue : null;
    }

    /**
     * @return true from the first record not written until one is written again.
     */
    boolean isFailing()
    {
        return inEpisode;
    }

    /**
     * Once a duty cycle: check the free space (every 10 ms) and, after a failed write, reopen the queue (at most
     * once a second, when there is space).
     *
     * @return 1 when the queue was reopened.
     */
    int onDutyCycle(final long nowNs)
    {
        if (nowNs - spaceCheckedAtNs >= SPACE_CHECK_INTERVAL_NS)
        {
            spaceCheckedAtNs = nowNs;
            spaceLeft = usableSpace() >= minFreeBytes;
            if (!spaceLeft && !inEpisode)
            {
                startEpisode("less than " + minFreeBytes + " bytes free");
            }
        }
        if (open || !spaceLeft || nowNs - lastReopenAttemptNs < REOPEN_INTERVAL_NS)
        {
            return 0;
        }
        lastReopenAttemptNs = nowNs;
        SingleChronicleQueue reopened = null;
        try
        {
            setAsideCurrentCycle();
            reopened = opener.get();
            appender = reopened.createAppender();
            queue = reopened;
        }
        catch (final InternalError | RuntimeException | IOException ex)
        {
            if (reopened != null)
            {
                reopened.close();
            }
            return 0; // still failing; said once already
        }
        open = true;
        return 1;
    }

    /**
     * One record: its type, the epoch offset of its timestamps, then {@code length} bytes (a multiple of 8).
     */
    void append(final int type, final long epochOffsetNanos, final DirectBuffer buffer, final int index,
        final int length)
    {
        if (!open || !spaceLeft)
        {
            notWritten();
            return;
        }
        try (DocumentContext dc = appender.writingDocument())
        {
            final Bytes<?> bytes = dc.wire().bytes();
            bytes.writeInt(type);
            bytes.writeLong(epochOffsetNanos);
            for (int i = 0; i < length; i += 8)
            {
                bytes.writeLong(buffer.getLong(index + i));
            }
        }
        catch (final InternalError | RuntimeException ex)
        {
            onWriteFailed(ex);
            return;
        }
        endEpisode();
    }

    /**
     * @return true when the name was written.
     */
    boolean appendName(final long epochOffsetNanos, final int id, final String name)
    {
        if (!open || !spaceLeft)
        {
            return false;
        }
        try (DocumentContext dc = appender.writingDocument())
        {
            final Bytes<?> bytes = dc.wire().bytes();
            bytes.writeInt(NAME);
            bytes.writeLong(epochOffsetNanos);
            bytes.writeInt(id);
            bytes.writeUtf8(name);
        }
        catch (final InternalError | RuntimeException ex)
        {
            onWriteFailed(ex);
            return false;
        }
        endEpisode();
        return true;
    }

    /**
     * A write failed (a fault the JVM delivered after the write that caused it had returned ends up here too).
     */
    void onWriteFailed(final Throwable failure)
    {
        notWritten();
        if (!inEpisode)
        {
            startEpisode(failure.toString());
        }
        if (open)
        {
            open = false;
            lastReopenAttemptNs = System.nanoTime();
            closeQuietly();
        }
    }

    private void startEpisode(final String why)
    {
        inEpisode = true;
        LOG.warn("journal: cannot write to {} ({}): records are counted as not written until it can be written " +
            "again; transfers are not affected", directory, why);
    }

    private void endEpisode()
    {
        if (inEpisode)
        {
            inEpisode = false;
            LOG.info("journal: {} is written again; {} records were not written", directory, notWrittenInEpisode);
            notWrittenInEpisode = 0;
        }
    }

    /**
     * The newest cycle file was being written when a write failed: keep it, under another name, for the tools.
     */
    private void setAsideCurrentCycle() throws IOException
    {
        final List<Path> cycles;
        try (Stream<Path> files = Files.list(directory))
        {
            cycles = files.filter(path -> path.getFileName().toString().endsWith(".cq4")).sorted().toList();
        }
        if (!cycles.isEmpty())
        {
            final Path current = cycles.getLast();
            final Path aside = current.resolveSibling(current.getFileName() + "." + System.currentTimeMillis() +
                DAMAGED_SUFFIX);
            Files.move(current, aside);
            LOG.warn("journal: {} was being written when a write failed; kept as {}", current, aside);
        }
    }

    private long usableSpace()
    {
        try
        {
            return fileStore.getUsableSpace();
        }
        catch (final IOException ex)
        {
            return 0;
        }
    }

    private void notWritten()
    {
        notWrittenInEpisode++;
        writeFailures.increment();
    }

    private void closeQuietly()
    {
        try
        {
            appender.close();
        }
        catch (final InternalError | RuntimeException ignore)
        {
            // the mapping is what failed; the queue is reopened from its files
        }
        try
        {
            queue.close();
        }
        catch (final InternalError | RuntimeException ignore)
        {
            // as above
        }
    }

    @Override
    public void close()
    {
        if (open)
        {
            open = false;
            closeQuietly();
        }
    }
}
