package io.xferd.daemon.tools.cli;

import io.xferd.daemon.config.OperationsContext;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * {@code xferd daemon}'s options for the journal, the metrics endpoint and slow-request logging.
 */
public final class OperationsOptions
{
    @Option(names = "--journal", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Record every request's lifecycle in the transfer journal (default: on; --no-journal: off).")
    boolean journal = true;

    @Option(names = "--journal-dir", description = "Journal directory (default: <dir>/journal).")
    Path journalDirectory;

    @Option(names = "--journal-roll-cycle", description = "Journal file per FAST_HOURLY, HOURLY, FAST_DAILY, DAILY, " +
        "FIVE_MINUTELY, MINUTELY ... (default: ${DEFAULT-VALUE}).")
    String journalRollCycle = "FAST_HOURLY";

    @Option(names = "--journal-retention-cycles", description = "Journal cycle files to keep, the current one " +
        "included; 0 keeps all (default: ${DEFAULT-VALUE}).")
    int journalRetentionCycles = 24;

    @Option(names = "--slow-request-ms", description = "Log a request slower than this, submit to completion, " +
        "with its trace id (at most one line a second; 0: sample one request a second; -1: never; needs the journal) (default: ${DEFAULT-VALUE}).")
    long slowRequestMs = 100;

    @Option(names = "--metrics-address", description = "Prometheus endpoint host:port, or off " +
        "(default: ${DEFAULT-VALUE}).")
    String metricsAddress = OperationsContext.DEFAULT_METRICS_ADDRESS;

    void applyTo(final OperationsContext context)
    {
        context.journalEnabled(journal)
            .journalDirectory(journalDirectory)
            .journalRollCycle(journalRollCycle)
            .journalRetentionCycles(journalRetentionCycles)
            .slowRequestMs(slowRequestMs)
            .metricsAddress(metricsAddress);
    }
}
