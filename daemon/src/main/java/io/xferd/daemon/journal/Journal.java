package io.xferd.daemon.journal;

import io.xferd.daemon.agent.BatchingIdleStrategy;
import io.xferd.daemon.agent.DozingBackoffIdleStrategy;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.OperationsContext;
import io.xferd.daemon.files.FileModes;
import io.xferd.daemon.journal.queue.JournalQueues;
import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The journal as the daemon runs it: the recorder the data plane calls, and the agent on its own thread that
 * writes the Chronicle Queue and feeds the metrics' latency histograms. Off ({@code --no-journal}): the data
 * plane gets {@link TransferJournal#DISABLED}, no thread, no files, no per-(op, peer, NIC) metrics.
 */
public final class Journal implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Journal.class);

    private final JournalRecorder recorder;
    private final TransferStats stats;
    private final AgentRunner runner;

    private Journal(final JournalRecorder recorder, final TransferStats stats, final AgentRunner runner)
    {
        this.recorder = recorder;
        this.stats = stats;
        this.runner = runner;
    }

    /**
     * @return a journal whose recorder records from now on (into its ring), its thread not yet started; or one that
     * does nothing when the settings switch it off.
     */
    public static Journal create(final OperationsContext context, final SystemCounters counters)
    {
        if (!context.journalEnabled())
        {
            return new Journal(null, null, null);
        }
        try
        {
            Files.createDirectories(context.journalDirectory());
            // Chronicle Queue creates its files with the umask's mode: the directory keeps others out of them
            FileModes.restrictDirectory(context.journalDirectory());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create the journal directory " + context.journalDirectory(), ex);
        }
        final AtomicCounter writeFailures = counters.get(SystemCounter.JOURNAL_WRITE_FAILURES);
        // opened on the journal's thread: Chronicle Queue stays off the daemon's path to "serving"
        final Supplier<JournalAppender> appender = () -> new JournalAppender(
            () -> JournalQueues.openForAppend(context.journalDirectory(), context.journalRollCycle()),
            writeFailures, JournalAppender.MIN_FREE_BYTES_DEFAULT);
        final JournalRecorder recorder = new JournalRecorder(context.journalRingCapacity(),
            counters.get(SystemCounter.JOURNAL_DROPPED), new JournalNames());
        final TransferStats stats = new TransferStats();
        final JournalAgent agent = new JournalAgent(recorder, appender, writeFailures, context.journalRetentionCycles(),
            stats,
            context.slowRequestMs() < 0 ? -1 : TimeUnit.MILLISECONDS.toNanos(context.slowRequestMs()));
        // 5 ms naps while records come, whatever a cycle drained short of a full batch (a reset on every record kept
        // the thread busy beside a stream of small requests; 1 ms naps cost a timer and a wake-up each, 0.07-0.14 CPU
        // s per GB moved between hosts, twice what 5 ms cost; the 2 MiB ring holds ~14,500 local requests' records,
        // 144 B each: 5 ms of ~2.9 M a second less the nap's lateness; a cycle that drains a full batch goes straight
        // on, and drops are counted and logged); 1 ms parks when a cycle finds nothing, after ~100 ms
        // without any, 10 ms dozes; after ~1 s more, sleeps of up to 1 s that the next record cuts short
        final AgentRunner runner = new AgentRunner(new BatchingIdleStrategy(new DozingBackoffIdleStrategy(0, 0,
            TimeUnit.MILLISECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1), 100, TimeUnit.MILLISECONDS.toNanos(10),
            200, TimeUnit.MILLISECONDS.toNanos(10)).doorbell(recorder.doorbell(), TimeUnit.SECONDS.toNanos(1)),
            JournalAgent.DRAIN_LIMIT, TimeUnit.MILLISECONDS.toNanos(5)),
            throwable -> LOG.error("journal agent error", throwable), null, agent);
        LOG.info("transfer journal in {} ({} cycles, keeping {})", context.journalDirectory(),
            context.journalRollCycle(), context.journalRetentionCycles() == 0 ? "all" :
            Integer.toString(context.journalRetentionCycles()));
        return new Journal(recorder, stats, runner);
    }

    /**
     * Start the journal's thread: it opens the queue, then writes what was recorded since {@link #create}.
     */
    public void start()
    {
        if (runner != null)
        {
            AgentRunner.startOnThread(runner);
        }
    }

    /**
     * @return what the data plane calls.
     */
    public TransferJournal recorder()
    {
        return recorder != null ? recorder : TransferJournal.DISABLED;
    }

    /**
     * @return the completion totals and latency histograms, or null when the journal is off.
     */
    public TransferStats stats()
    {
        return stats;
    }

    public JournalNames names()
    {
        return recorder != null ? recorder.names() : null;
    }

    /**
     * @return the journal's thread once started; null when the journal is off.
     */
    public Thread thread()
    {
        return runner != null ? runner.thread() : null;
    }

    /**
     * Drain what is left into the queue and close it; call after the data plane stopped.
     */
    @Override
    public void close()
    {
        if (runner != null)
        {
            runner.close();
        }
    }
}
