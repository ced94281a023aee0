package io.xferd.daemon.tools.status;

import io.xferd.daemon.statusmap.StatusFileDescriptor;
import io.xferd.daemon.statusmap.StatusFileReader;
import io.xferd.daemon.storage.StorageCounters;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.SystemCounter;
import io.xferd.nativebindings.verbs.Verbs;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code xferd status} shows, read without asking the daemon (as Aeron's AeronStat does): the cnc file's
 * header, heartbeat, counters and to-daemon ring positions, and the status file's clients, regions and settings
 * ({@link StatusFileDescriptor}). Plain maps and lists, in the order shown, so that text and JSON come from the same
 * data.
 */
public final class StatusSnapshot
{
    private StatusSnapshot()
    {
    }

    /**
     * @return the snapshot; {@code running} false (with {@code reason}) when no daemon serves the directory.
     */
    public static Map<String, Object> read(final Path directory)
    {
        final Map<String, Object> status = new LinkedHashMap<>();
        status.put("directory", directory.toString());
        final Path cncFile = directory.resolve(CncFileDescriptor.CNC_FILE);
        if (!Files.exists(cncFile))
        {
            status.put("running", false);
            status.put("reason", "no xferd daemon in " + directory + " (no " + CncFileDescriptor.CNC_FILE +
                "; start one with: xferd daemon --dir " + directory + ")");
            return status;
        }
        // a copy, read, not mapped: the first FileChannel.map of a JVM builds a DirectByteBuffer by reflection,
        // whose method handles (~30 generated classes) were a third of a cold status run; one snapshot is all
        // status shows, and every value is read once either way
        final UnsafeBuffer cnc;
        try
        {
            cnc = new UnsafeBuffer(Files.readAllBytes(cncFile));
        }
        catch (final java.io.IOException ex)
        {
            status.put("running", false);
            status.put("reason", "cannot read " + cncFile + ": " + ex);
            return status;
        }
        try
        {
            CncFileDescriptor.checkHeader(cnc);
        }
        catch (final IllegalStateException ex)
        {
            status.put("running", false);
            status.put("reason", ex.getMessage());
            return status;
        }
        readCnc(cnc, status);
        final Object rdma = (Boolean)status.get("running") ? readStatusFile(directory, status) : null;
        // the daemon's own finding when it published one: finding it here costs the FFM linker's start-up
        status.put("rdma", rdma != null ? rdma : Verbs.availability().toString());
        return status;
    }

    private static void readCnc(final UnsafeBuffer cnc, final Map<String, Object> status)
    {
        final long now = System.currentTimeMillis();
        final long age = now - CncFileDescriptor.heartbeatMs(cnc);
        final boolean alive = age <= CncFileDescriptor.livenessTimeoutMs(cnc);
        status.put("running", alive);
        if (!alive)
        {
            status.put("reason", "the daemon's heartbeat is " + age + " ms old: it stopped without cleaning up");
        }
        final Map<String, Object> daemon = new LinkedHashMap<>();
        daemon.put("pid", CncFileDescriptor.daemonPid(cnc));
        daemon.put("started_at", Instant.ofEpochMilli(CncFileDescriptor.startTimeMs(cnc)).toString());
        daemon.put("uptime_s", (now - CncFileDescriptor.startTimeMs(cnc)) / 1000);
        daemon.put("heartbeat_age_ms", age);
        status.put("daemon", daemon);

        final CountersReader reader = new CountersReader(
            CncFileDescriptor.countersMetadataBuffer(cnc), CncFileDescriptor.countersValuesBuffer(cnc));
        final long[] values = new long[SystemCounter.values().length];
        final Map<String, Object> counters = new LinkedHashMap<>();
        final Map<String, Map<String, Object>> paths = new java.util.TreeMap<>();
        final Map<String, Map<String, Object>> storageRegions = new java.util.TreeMap<>();
        reader.forEach((value, id, label) ->
        {
            final int type = reader.getCounterTypeId(id);
            if (type == io.xferd.daemon.transport.tcp.PeerPath.BYTES_TYPE_ID || type == io.xferd.daemon.transport.tcp.PeerPath.FAILURES_TYPE_ID ||
                type == io.xferd.daemon.transport.tcp.PeerPath.STATE_TYPE_ID)
            {
                pathCounter(paths, type, label, value);
            }
            if (type >= StorageCounters.READ_TYPE_ID && type <= StorageCounters.ERRORS_TYPE_ID) // constants: no class load
            {
                storageCounter(storageRegions, type, label, value);
            }
            if (reader.getCounterTypeId(id) == SystemCounter.TYPE_ID)
            {
                counters.put(label, value);
                if (id < values.length)
                {
                    values[id] = value;
                }
            }
        });
        final Map<String, Object> storage = new LinkedHashMap<>();
        storage.put("bytes_read", values[SystemCounter.STORAGE_BYTES_READ.id()]);
        storage.put("bytes_written", values[SystemCounter.STORAGE_BYTES_WRITTEN.id()]);
        storage.put("errors", values[SystemCounter.STORAGE_ERRORS.id()]);
        storage.put("syncs", values[SystemCounter.STORAGE_SYNCS.id()]);
        storage.put("regions", new ArrayList<>(storageRegions.values()));
        status.put("storage", storage);
        final long submitted = values[SystemCounter.REQUESTS_SUBMITTED.id()];
        final long completed = values[SystemCounter.REQUESTS_COMPLETED.id()];
        final long failed = values[SystemCounter.REQUESTS_FAILED.id()];
        final Map<String, Object> requests = new LinkedHashMap<>();
        requests.put("submitted", submitted);
        requests.put("completed_ok", completed);
        requests.put("failed", failed);
        requests.put("in_flight", submitted - completed - failed);
        status.put("requests", requests);

        status.put("clients_cut_off", values[SystemCounter.CLIENTS_CUT_OFF.id()]);
        status.put("malformed_ring_records", values[SystemCounter.MALFORMED_RECORDS.id()]);
        status.put("journal_write_failures", values[SystemCounter.JOURNAL_WRITE_FAILURES.id()]);
        status.put("journal_dropped", values[SystemCounter.JOURNAL_DROPPED.id()]);

        final Map<String, Object> shm = new LinkedHashMap<>();
        shm.put("name", "shm");
        shm.put("kind", "local");
        shm.put("bytes", values[SystemCounter.BYTES_READ.id()] + values[SystemCounter.BYTES_WRITTEN.id()]);
        shm.put("errors", failed);
        final List<Object> nics = new ArrayList<>(List.of(shm));
        nics.addAll(storageNics(storageRegions));
        nics.addAll(paths.values());
        status.put("nics", nics);
        final Map<String, Map<String, Object>> peers = new java.util.TreeMap<>();
        for (final Map<String, Object> path : paths.values())
        {
            final Map<String, Object> peer = peers.computeIfAbsent((String)path.get("peer"), address ->
            {
                final Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("address", address);
                entry.put("paths", 0);
                entry.put("paths_paused", 0);
                entry.put("bytes", 0L);
                entry.put("failures", 0L);
                return entry;
            });
            peer.merge("paths", 1, (a, b) -> (Integer)a + (Integer)b);
            peer.merge("paths_paused", "paused".equals(path.get("state")) ? 1 : 0, (a, b) -> (Integer)a + (Integer)b);
            peer.merge("bytes", path.get("bytes"), (a, b) -> (Long)a + (Long)b);
            peer.merge("failures", path.get("errors"), (a, b) -> (Long)a + (Long)b);
        }
        status.put("peers_by_path", new ArrayList<>(peers.values()));
        status.put("counters", counters);
    }

    /**
     * A storage region's counters are labelled "storage SEGMENT 0xADDRESS file|nvme read|written|errors".
     */
    private static void storageCounter(
        final Map<String, Map<String, Object>> regions, final int type, final String label, final long value)
    {
        final int end = label.lastIndexOf(' ');
        if (!label.startsWith(StorageCounters.PREFIX) || end <= StorageCounters.PREFIX.length())
        {
            return;
        }
        final String region = label.substring(StorageCounters.PREFIX.length(), end);
        final Map<String, Object> entry = regions.computeIfAbsent(region, key ->
        {
            final int kindAt = key.lastIndexOf(' ');
            final int addressAt = key.lastIndexOf(' ', kindAt - 1);
            final Map<String, Object> fresh = new LinkedHashMap<>();
            fresh.put("segment", addressAt > 0 ? key.substring(0, addressAt) : key);
            fresh.put("address", addressAt > 0 ? key.substring(addressAt + 1, kindAt) : "");
            fresh.put("kind", key.substring(kindAt + 1));
            fresh.put("bytes_read", 0L);
            fresh.put("bytes_written", 0L);
            fresh.put("errors", 0L);
            return fresh;
        });
        entry.put(type == StorageCounters.READ_TYPE_ID ? "bytes_read" :
            type == StorageCounters.WRITTEN_TYPE_ID ? "bytes_written" : "errors", value);
    }

    /**
     * The journal's storage NICs ({@code file}, {@code nvme}): the bytes and errors of their regions, summed.
     */
    private static List<Map<String, Object>> storageNics(final Map<String, Map<String, Object>> regions)
    {
        final Map<String, Map<String, Object>> nics = new java.util.TreeMap<>();
        for (final Map<String, Object> region : regions.values())
        {
            final Map<String, Object> nic = nics.computeIfAbsent((String)region.get("kind"), kind ->
            {
                final Map<String, Object> fresh = new LinkedHashMap<>();
                fresh.put("name", kind);
                fresh.put("kind", "storage");
                fresh.put("bytes", 0L);
                fresh.put("errors", 0L);
                return fresh;
            });
            nic.merge("bytes", (Long)region.get("bytes_read") + (Long)region.get("bytes_written"),
                (a, b) -> (Long)a + (Long)b);
            nic.merge("errors", region.get("errors"), (a, b) -> (Long)a + (Long)b);
        }
        return new ArrayList<>(nics.values());
    }

    /**
     * A peer path's counters are labelled "path NIC -> host:port (peer host:port) bytes|failures|state ...".
     */
    private static void pathCounter(
        final Map<String, Map<String, Object>> paths, final int type, final String label, final long value)
    {
        final int peerAt = label.lastIndexOf(" (peer ");
        final int peerEnd = label.indexOf(')', peerAt);
        if (!label.startsWith("path ") || peerAt < 0 || peerEnd < 0)
        {
            return;
        }
        final String key = label.substring(0, peerEnd + 1);
        final Map<String, Object> path = paths.computeIfAbsent(key, ignored ->
        {
            final String description = label.substring("path ".length(), peerAt);
            final Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", description.substring(0, description.indexOf(" -> ")));
            // a TCP path ends at host:port, an RDMA path at the peer's device
            entry.put("kind", description.substring(description.indexOf(" -> ") + 4).contains(":") ? "tcp" : "rdma");
            entry.put("path", description);
            entry.put("peer", label.substring(peerAt + " (peer ".length(), peerEnd));
            entry.put("bytes", 0L);
            entry.put("errors", 0L);
            entry.put("state", "active");
            return entry;
        });
        if (type == io.xferd.daemon.transport.tcp.PeerPath.BYTES_TYPE_ID)
        {
            path.put("bytes", value);
        }
        else if (type == io.xferd.daemon.transport.tcp.PeerPath.FAILURES_TYPE_ID)
        {
            path.put("errors", value);
        }
        else
        {
            path.put("state", value == io.xferd.daemon.transport.tcp.PeerPath.PAUSED ? "paused" : "active");
        }
    }

    /**
     * The clients, their regions and the settings, from the daemon's status file (plain loads: no Chronicle).
     *
     * @return the daemon's finding on RDMA, or null.
     */
    private static Object readStatusFile(final Path directory, final Map<String, Object> status)
    {
        final StatusFileReader.Snapshot snapshot;
        try
        {
            snapshot = StatusFileReader.read(directory);
        }
        catch (final StatusFileReader.MalformedException ex)
        {
            status.put("registry", "unreadable: " + ex.getMessage());
            return null;
        }
        if (snapshot == null)
        {
            status.put("registry", "absent (" + StatusFileDescriptor.FILE + ")");
            return null;
        }
        if (!snapshot.config().isEmpty())
        {
            status.put("config", snapshot.config());
        }
        status.put("clients", snapshot.clients());
        final Object byPath = status.remove("peers_by_path");
        status.put("peers", byPath != null ? byPath : new ArrayList<>());
        return snapshot.facts().get("rdma");
    }
}
