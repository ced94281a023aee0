package io.xferd.daemon.journal;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static io.xferd.daemon.journal.JournalRecordDescriptor.*;

/**
 * The journal's consumer, on its own thread and off the hot path: drains the {@link JournalRecorder}'s ring into
 * the Chronicle Queue (when one is open), feeds the latency histograms and per-(op, peer, NIC, status) totals of
 * the metrics ({@link TransferStats}), logs slow requests by trace id (at most one line a second), and deletes
 * cycle files beyond the retention. Runs with a sleeping idle strategy: it mostly parks. Its thread never dies of
 * the journal's files: a write that fails (a full {@code /dev/shm}) is counted and survived by the
 * {@link JournalAppender}, the metrics keep being fed.
 * <p>
 * The daemon's agent opens its queue on its own thread ({@link #onStart()}), not on the daemon's serving path:
 * Chronicle Queue costs about a second of class loading and mapping. Whatever the data plane records meanwhile waits
 * in the recorder's ring and is written once the queue is open; a ring that fills first drops and counts
 * ({@code JOURNAL_DROPPED}), as it always does. A queue that cannot be opened at all leaves the agent feeding the
 * metrics and counting every record in {@code JOURNAL_WRITE_FAILURES}.
 */
public final class JournalAgent implements Agent, MessageHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(JournalAgent.class);
    static final int DRAIN_LIMIT = 4096;
    private static final long OFFSET_REFRESH_NS = TimeUnit.SECONDS.toNanos(1);
    private static final long RETENTION_CHECK_NS = TimeUnit.SECONDS.toNanos(1);
    private static final long SLOW_LOG_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);

    private final JournalRecorder recorder;
    private final Supplier<JournalAppender> appenderOpener;
    private final AtomicCounter openFailures;
    private JournalAppender appender;
    private Path queueDirectory;
    private final int retentionCycles;
    private final TransferStats stats;
    private final long slowNanos;
    private long epochOffsetNanos;
    private long offsetRefreshedAt;
    private long retentionCheckedAt;
    private long droppedReported;
    private int lastCycle = Integer.MIN_VALUE;
    private int namesWritten;
    private long lastSlowLogNanos;
    private long slowSuppressed;
    private boolean openFailed;

    /**
     * @param appender         writes the queue, or null to keep only the metrics (journal files off).
     * @param retentionCycles  cycle files to keep (the current one included); 0 keeps all.
     * @param stats            where completions are counted for the metrics, or null.
     * @param slowNanos        completions at least this slow (submit to complete) are logged; negative = never.
     */
    public JournalAgent(
        final JournalRecorder recorder,
        final JournalAppender appender,
        final int retentionCycles,
        final TransferStats stats,
        final long slowNanos)
    {
        this(recorder, null, null, retentionCycles, stats, slowNanos);
        opened(appender);
    }

    /**
     * An agent that opens its queue in {@link #onStart()}, on the thread that runs it.
     *
     * @param appenderOpener opens the queue (throws when it cannot).
     * @param openFailures   counts the records not written because the queue could not be opened.
     */
    public JournalAgent(
        final JournalRecorder recorder,
        final Supplier<JournalAppender> appenderOpener,
        final AtomicCounter openFailures,
        final int retentionCycles,
        final TransferStats stats,
        final long slowNanos)
    {
        this.recorder = recorder;
        this.appenderOpener = appenderOpener;
        this.openFailures = openFailures;
        this.retentionCycles = retentionCycles;
        this.stats = stats;
        this.slowNanos = slowNanos;
        final long now = System.nanoTime();
        this.epochOffsetNanos = SystemEpochNanoClock.INSTANCE.nanoTime() - now;
        this.offsetRefreshedAt = now;
        this.retentionCheckedAt = now - RETENTION_CHECK_NS;
        this.lastSlowLogNanos = now - SLOW_LOG_INTERVAL_NS;
    }

    private void opened(final JournalAppender appender)
    {
        this.appender = appender;
        this.queueDirectory = appender != null ? appender.queue().file().toPath() : null;
    }

    /**
     * Open the queue, when this agent was made to open it: until then the recorder's ring holds the records.
     */
    @Override
    public void onStart()
    {
        if (appenderOpener == null)
        {
            return;
        }
        try
        {
            opened(appenderOpener.get());
        }
        catch (final RuntimeException | InternalError ex)
        {
            openFailed = true;
            LOG.error("journal: cannot open the queue ({}): every record is counted as not written; transfers " +
                "and metrics are not affected", ex.toString());
        }
    }

    /**
     * @return true once the queue is open (or was given open).
     */
    boolean isOpen()
    {
        return appender != null;
    }

    @Override
    public int doWork()
    {
        final long now = System.nanoTime();
        if (now - offsetRefreshedAt >= OFFSET_REFRESH_NS)
        {
            offsetRefreshedAt = now;
            epochOffsetNanos = SystemEpochNanoClock.INSTANCE.nanoTime() - System.nanoTime();
        }
        int work = 0;
        try
        {
            final int read = recorder.ring().read(this, DRAIN_LIMIT);
            // a read stops at the ring's end: read on past the wrap, so that a backlog is not taken for a short
            // batch (and a nap) once a lap, which would halve the headroom the naps leave
            work += read > 0 && read < DRAIN_LIMIT ? read + recorder.ring().read(this, DRAIN_LIMIT - read) : read;
            if (appender != null)
            {
                work += appender.onDutyCycle(now);
                work += writeNamesIfNeeded();
            }
        }
        catch (final InternalError ex)
        {
            if (appender == null)
            {
                throw ex;
            }
            // a fault of a mapped journal page the JVM delivered after the write that caused it had returned
            appender.onWriteFailed(ex);
        }
        if (now - retentionCheckedAt >= RETENTION_CHECK_NS)
        {
            retentionCheckedAt = now;
            reportDrops();
            if (appender != null)
            {
                work += enforceRetention(); // also while writes fail: deleting old cycles may be what frees the space
            }
        }
        return work;
    }

    /**
     * At most once a second: say that records were dropped (a full ring), since a trace or the slow-request log then
     * misses requests without another sign of it.
     */
    private void reportDrops()
    {
        final long dropped = recorder.droppedRecords();
        if (dropped != droppedReported)
        {
            LOG.warn("journal: {} records dropped (ring full) since the last report, {} in all: traces and the " +
                "slow-request log miss them", dropped - droppedReported, dropped);
            droppedReported = dropped;
        }
    }

    @Override
    public void onMessage(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (appender != null)
        {
            appender.append(type, epochOffsetNanos, buffer, index, length);
        }
        else if (openFailed)
        {
            openFailures.increment();
        }
        if (type == COMPLETED)
        {
            if (stats != null)
            {
                stats.onCompleted(buffer, index);
            }
            if (slowNanos >= 0)
            {
                checkSlow(buffer, index);
            }
        }
    }

    private void checkSlow(final MutableDirectBuffer buffer, final int index)
    {
        final long submit = buffer.getLong(index + COMPLETED_SUBMIT_NS);
        final long intake = buffer.getLong(index + COMPLETED_INTAKE_NS);
        final long complete = buffer.getLong(index + COMPLETED_COMPLETE_NS);
        if (complete - submit < slowNanos)
        {
            return;
        }
        if (complete - lastSlowLogNanos < SLOW_LOG_INTERVAL_NS)
        {
            slowSuppressed++;
            return;
        }
        lastSlowLogNanos = complete;
        LOG.info("slow request: trace {} request {} {} {} B client slot {} peer {} nic {}: {} us (queue {} us, " +
            "execution {} us), status {}{}",
            Long.toUnsignedString(buffer.getLong(index + TRACE_ID), 16),
            buffer.getLong(index + REQUEST_ID),
            Opcode.name(buffer.getInt(index + COMPLETED_OPCODE)),
            buffer.getLong(index + COMPLETED_LENGTH_FIELD),
            buffer.getInt(index + COMPLETED_SLOT),
            recorder.names().name(buffer.getInt(index + COMPLETED_PEER)),
            recorder.names().name(buffer.getInt(index + COMPLETED_NIC)),
            (complete - submit) / 1000, (intake - submit) / 1000, (complete - intake) / 1000,
            TransferStatus.name(buffer.getInt(index + COMPLETED_STATUS)),
            slowSuppressed > 0 ? " (" + slowSuppressed + " more slow requests not logged)" : "");
        slowSuppressed = 0;
    }

    /**
     * Names go into the queue when new, and all of them again at the start of each roll cycle.
     */
    private int writeNamesIfNeeded()
    {
        final SingleChronicleQueue queue = appender.queue();
        if (queue == null)
        {
            lastCycle = Integer.MIN_VALUE; // a reopened queue gets every name again
            return 0;
        }
        final List<String> names = recorder.names().all();
        final int cycle = queue.cycle();
        final int from = cycle != lastCycle ? 0 : namesWritten;
        if (from >= names.size())
        {
            return 0;
        }
        for (int id = from; id < names.size(); id++)
        {
            if (!appender.appendName(epochOffsetNanos, id, names.get(id)))
            {
                lastCycle = Integer.MIN_VALUE;
                return 0;
            }
        }
        lastCycle = cycle;
        namesWritten = names.size();
        return 1;
    }

    /**
     * Delete the oldest cycle files beyond the retention (file names of a roll cycle sort by time).
     */
    int enforceRetention()
    {
        if (retentionCycles <= 0)
        {
            return 0;
        }
        final List<Path> cycles;
        try (Stream<Path> files = Files.list(queueDirectory))
        {
            cycles = files.filter(path -> path.getFileName().toString().endsWith(".cq4")).sorted().toList();
        }
        catch (final IOException ex)
        {
            LOG.warn("journal retention: cannot list {}: {}", queueDirectory, ex.toString());
            return 0;
        }
        int deleted = 0;
        for (int i = 0; i < cycles.size() - retentionCycles; i++)
        {
            try
            {
                Files.deleteIfExists(cycles.get(i));
                deleted++;
            }
            catch (final IOException ex)
            {
                LOG.warn("journal retention: cannot delete {}: {}", cycles.get(i), ex.toString());
            }
        }
        final SingleChronicleQueue queue = appender.queue();
        if (deleted > 0 && queue != null)
        {
            queue.refreshDirectoryListing();
            LOG.info("journal retention: deleted {} cycle file(s) older than the last {}", deleted, retentionCycles);
        }
        return deleted;
    }

    @Override
    public void onClose()
    {
        try
        {
            while (recorder.ring().read(this, DRAIN_LIMIT) > 0)
            {
                // drain what the data plane wrote before it stopped
            }
            if (appender != null)
            {
                writeNamesIfNeeded();
            }
        }
        catch (final InternalError ex)
        {
            if (appender == null)
            {
                throw ex;
            }
            appender.onWriteFailed(ex);
        }
        if (appender != null)
        {
            appender.close();
        }
    }

    @Override
    public String roleName()
    {
        return "xferd-journal";
    }
}
