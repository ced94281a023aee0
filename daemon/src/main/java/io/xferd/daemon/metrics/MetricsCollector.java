package io.xferd.daemon.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.journal.JournalNames;
import io.xferd.daemon.journal.TransferStats;
import io.xferd.daemon.storage.StorageCounters;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Everything the metrics endpoint shows, computed at scrape time: the cnc file's counters (never a second
 * counter on the hot path), the to-daemon ring's occupancy, and, while the journal runs, the journal agent's
 * completions by (op, peer, nic, status) and latency histograms by (op, peer, nic).
 */
public final class MetricsCollector implements MultiCollector
{
    /**
     * Upper bounds of the latency histogram's buckets, seconds (1 us .. 10 s).
     */
    static final double[] LATENCY_BOUNDS = {
        1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25,
        0.5, 1, 2.5, 5, 10, Double.POSITIVE_INFINITY};

    private final SystemCounters counters;
    private final TransferStats stats;
    private final JournalNames names;
    private volatile java.util.function.Supplier<Iterable<io.xferd.daemon.transport.tcp.PeerLink>> peers = java.util.List::of;

    /**
     * @param stats null when the journal is off (no per-op/peer/nic breakdown, no latency).
     */
    public MetricsCollector(
        final SystemCounters counters, final TransferStats stats, final JournalNames names)
    {
        this.counters = counters;
        this.stats = stats;
        this.names = names;
    }

    /**
     * The peer links whose paths (NICs) to show: bytes, failures and whether each path is paused.
     */
    public MetricsCollector peers(final java.util.function.Supplier<Iterable<io.xferd.daemon.transport.tcp.PeerLink>> peers)
    {
        this.peers = peers;
        return this;
    }

    /**
     * Each storage region's bytes and errors, from its counters (labelled by {@code StorageCounters}).
     */
    private void addStorageRegionFamilies(final List<MetricSnapshot> snapshots)
    {
        final CounterSnapshot.Builder bytes = CounterSnapshot.builder().name("xferd_storage_region_bytes")
            .help("Bytes moved to and from each storage region (a client's registered file or a configured " +
                "storage segment), by operation on the file.");
        final CounterSnapshot.Builder errors = CounterSnapshot.builder().name("xferd_storage_region_errors")
            .help("Failed requests of each storage region (typed statuses 15..19).");
        final org.agrona.concurrent.status.CountersReader reader = counters.reader();
        final boolean[] any = new boolean[1];
        reader.forEach((value, id, label) ->
        {
            final int type = reader.getCounterTypeId(id);
            if (type < StorageCounters.READ_TYPE_ID || type > StorageCounters.ERRORS_TYPE_ID ||
                StorageCounters.regionOf(label) == null)
            {
                return;
            }
            final String region = StorageCounters.regionOf(label);
            final int kindAt = region.lastIndexOf(' ');
            final int addressAt = region.lastIndexOf(' ', kindAt - 1);
            if (addressAt <= 0)
            {
                return;
            }
            any[0] = true;
            final Labels labels = Labels.of("segment", region.substring(0, addressAt), "address",
                region.substring(addressAt + 1, kindAt), "kind", region.substring(kindAt + 1));
            if (type == StorageCounters.ERRORS_TYPE_ID)
            {
                errors.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(value).build());
            }
            else
            {
                bytes.dataPoint(CounterDataPointSnapshot.builder()
                    .labels(labels.add("op", type == StorageCounters.READ_TYPE_ID ? "read" : "write"))
                    .value(value).build());
            }
        });
        if (any[0])
        {
            snapshots.add(bytes.build());
            snapshots.add(errors.build());
        }
    }

    private void addPathFamilies(final List<MetricSnapshot> snapshots)
    {
        final CounterSnapshot.Builder bytes = CounterSnapshot.builder().name("xferd_path_bytes")
            .help("Bytes answered on each path to a peer (local NIC to the peer's address).");
        final CounterSnapshot.Builder failures = CounterSnapshot.builder().name("xferd_path_failures")
            .help("Connection failures and timeouts on each path to a peer.");
        final GaugeSnapshot.Builder paused = GaugeSnapshot.builder().name("xferd_path_paused")
            .help("1 while a path is paused after failures, else 0.");
        boolean any = false;
        for (final io.xferd.daemon.transport.tcp.PeerLink link : peers.get())
        {
            for (final io.xferd.daemon.transport.tcp.PeerPath path : link.paths())
            {
                any = true;
                final Labels labels = Labels.of("peer", link.address(), "nic",
                    path.localNic() == null ? "default" : path.localNic(), "path", path.description());
                bytes.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(path.bytes()).build());
                failures.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(path.failures()).build());
                paused.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(path.isPaused() ? 1 : 0).build());
            }
        }
        if (any)
        {
            snapshots.add(bytes.build());
            snapshots.add(failures.build());
            snapshots.add(paused.build());
        }
    }

    @Override
    public MetricSnapshots collect()
    {
        final List<MetricSnapshot> snapshots = new ArrayList<>();
        snapshots.add(gauge("xferd_clients", "Connected client processes.",
            value(SystemCounter.CLIENTS_CONNECTED) - value(SystemCounter.CLIENTS_DISCONNECTED)));
        snapshots.add(gauge("xferd_registered_bytes", "Bytes of client memory registered with the daemon.",
            value(SystemCounter.REGISTERED_BYTES)));
        snapshots.add(gauge("xferd_registered_regions", "Registered memory regions.",
            value(SystemCounter.REGIONS_REGISTERED)));
        final long inFlight = value(SystemCounter.REQUESTS_SUBMITTED) - value(SystemCounter.REQUESTS_COMPLETED) -
            value(SystemCounter.REQUESTS_FAILED);
        snapshots.add(gauge("xferd_requests_in_flight", "Requests accepted and not yet completed.", inFlight));

        snapshots.add(counter("xferd_requests_submitted", "Requests accepted by intake.",
            value(SystemCounter.REQUESTS_SUBMITTED)));
        snapshots.add(counter("xferd_requests_completed", "Requests completed OK.",
            value(SystemCounter.REQUESTS_COMPLETED)));
        snapshots.add(counter("xferd_requests_failed", "Requests completed with an error status.",
            value(SystemCounter.REQUESTS_FAILED)));
        snapshots.add(CounterSnapshot.builder().name("xferd_bytes").help("Bytes moved, by operation.")
            .dataPoint(CounterDataPointSnapshot.builder().labels(Labels.of("op", "read"))
                .value(value(SystemCounter.BYTES_READ)).build())
            .dataPoint(CounterDataPointSnapshot.builder().labels(Labels.of("op", "write"))
                .value(value(SystemCounter.BYTES_WRITTEN)).build())
            .build());
        snapshots.add(CounterSnapshot.builder().name("xferd_storage_bytes")
            .help("Bytes moved to and from storage regions (files, block devices), by operation on the file.")
            .dataPoint(CounterDataPointSnapshot.builder().labels(Labels.of("op", "read"))
                .value(value(SystemCounter.STORAGE_BYTES_READ)).build())
            .dataPoint(CounterDataPointSnapshot.builder().labels(Labels.of("op", "write"))
                .value(value(SystemCounter.STORAGE_BYTES_WRITTEN)).build())
            .build());
        snapshots.add(counter("xferd_storage_errors", "Storage requests that failed (typed statuses 15..19).",
            value(SystemCounter.STORAGE_ERRORS)));
        addStorageRegionFamilies(snapshots);
        snapshots.add(counter("xferd_storage_syncs", "fdatasync calls on storage regions registered sync (one per " +
            "group of writes to a file that landed together).", value(SystemCounter.STORAGE_SYNCS)));
        snapshots.add(counter("xferd_malformed_records", "Ring records dropped as malformed.",
            value(SystemCounter.MALFORMED_RECORDS)));
        snapshots.add(counter("xferd_clients_cut_off", "Clients disconnected for breaking the ring protocol.",
            value(SystemCounter.CLIENTS_CUT_OFF)));
        snapshots.add(counter("xferd_notifications_delivered", "Notifications delivered to targets.",
            value(SystemCounter.NOTIFICATIONS_DELIVERED)));
        snapshots.add(counter("xferd_notifications_dropped", "Notifications dropped: receiver ring full.",
            value(SystemCounter.NOTIFICATIONS_DROPPED)));
        snapshots.add(counter("xferd_pipeline_backpressure", "Intake stalls on a full pipeline.",
            value(SystemCounter.PIPELINE_BACKPRESSURE)));
        snapshots.add(counter("xferd_journal_dropped_records", "Journal records dropped: journal ring full.",
            value(SystemCounter.JOURNAL_DROPPED)));
        snapshots.add(counter("xferd_journal_write_failures", "Journal records not written: the journal's files " +
            "could not be written (file system full?); the journal retries once a second.",
            value(SystemCounter.JOURNAL_WRITE_FAILURES)));
        if (stats != null)
        {
            addTransferFamilies(snapshots);
        }
        addPathFamilies(snapshots);
        return new MetricSnapshots(snapshots);
    }

    private void addTransferFamilies(final List<MetricSnapshot> snapshots)
    {
        final CounterSnapshot.Builder transfers = CounterSnapshot.builder().name("xferd_transfers")
            .help("Completed transfer requests by operation, peer, NIC and status.");
        final CounterSnapshot.Builder bytes = CounterSnapshot.builder().name("xferd_transfer_bytes")
            .help("Bytes moved by completed transfer requests, by operation, peer, NIC and status.");
        final CounterSnapshot.Builder errors = CounterSnapshot.builder().name("xferd_transfer_errors")
            .help("Transfer requests that failed, by operation, peer, NIC and status.");
        for (final TransferStats.Total total : stats.totals())
        {
            final Labels labels = Labels.of("op", op(total.opcode()), "peer", names.name(total.peerId()),
                "nic", names.name(total.nicId()), "status", status(total.status()));
            transfers.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(total.count()).build());
            bytes.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(total.bytes()).build());
            if (total.status() != TransferStatus.OK)
            {
                errors.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(total.count()).build());
            }
        }
        snapshots.add(transfers.build());
        snapshots.add(bytes.build());
        snapshots.add(errors.build());

        final HistogramSnapshot.Builder latency = HistogramSnapshot.builder().name("xferd_transfer_latency_seconds")
            .help("Submit-to-completion latency of successful transfer requests (client submit to daemon completion).");
        for (final TransferStats.Latency row : stats.latencies())
        {
            latency.dataPoint(histogram(row.histogram(), Labels.of("op", op(row.opcode()),
                "peer", names.name(row.peerId()), "nic", names.name(row.nicId()))));
        }
        snapshots.add(latency.build());
    }

    static HistogramDataPointSnapshot histogram(final Histogram histogram, final Labels labels)
    {
        final long[] counts = new long[LATENCY_BOUNDS.length];
        long below = 0;
        for (int i = 0; i < LATENCY_BOUNDS.length; i++)
        {
            final long cumulative = Double.isInfinite(LATENCY_BOUNDS[i]) ? histogram.getTotalCount() :
                histogram.getCountBetweenValues(0, (long)(LATENCY_BOUNDS[i] * 1e9));
            counts[i] = cumulative - below;
            below = cumulative;
        }
        return HistogramDataPointSnapshot.builder()
            .classicHistogramBuckets(ClassicHistogramBuckets.of(LATENCY_BOUNDS, counts))
            .sum(histogram.getMean() * histogram.getTotalCount() / 1e9)
            .labels(labels)
            .build();
    }

    static String op(final int opcode)
    {
        return Opcode.name(opcode).toLowerCase(Locale.ROOT);
    }

    static String status(final int status)
    {
        return TransferStatus.name(status).toLowerCase(Locale.ROOT);
    }

    private long value(final SystemCounter counter)
    {
        return counters.get(counter).get();
    }

    private static GaugeSnapshot gauge(final String name, final String help, final double value)
    {
        return GaugeSnapshot.builder().name(name).help(help)
            .dataPoint(GaugeDataPointSnapshot.builder().value(value).build()).build();
    }

    private static CounterSnapshot counter(final String name, final String help, final double value)
    {
        return CounterSnapshot.builder().name(name).help(help)
            .dataPoint(CounterDataPointSnapshot.builder().value(value).build()).build();
    }
}
