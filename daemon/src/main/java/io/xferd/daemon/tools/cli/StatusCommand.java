package io.xferd.daemon.tools.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.tools.status.StatusJson;
import io.xferd.daemon.tools.status.StatusSnapshot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code xferd status}: a snapshot of the running daemon (clients, segments and their regions, peers, NICs,
 * requests in flight, ring occupancy, counters), read from its cnc and registry files without disturbing it (as
 * Aeron's AeronStat does). Exit 0 when a live daemon serves the directory, 1 otherwise.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Print the running daemon's clients, regions, peers, NICs, rings and counters, read from shared " +
        "memory (--json for machines).")
public final class StatusCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--dir", description = "Daemon directory (default: ${DEFAULT-VALUE}).")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        return print(directory, json, spec.commandLine().getOut());
    }

    /**
     * What the command does, without picocli (XferdLauncher calls it for the plain forms of the command line).
     *
     * @return the exit code: 0 when a live daemon serves the directory, 1 otherwise.
     */
    static int print(final Path directory, final boolean json, final PrintWriter out) throws java.io.IOException
    {
        final Map<String, Object> status = StatusSnapshot.read(directory);
        if (json)
        {
            final String text = StatusJson.write(status); // Jackson's layout, without loading Jackson
            out.println(text != null ? text : jackson(status));
        }
        else
        {
            printText(status, out);
        }
        out.flush();
        return Boolean.TRUE.equals(status.get("running")) ? 0 : 1;
    }

    private static String jackson(final Map<String, Object> status) throws java.io.IOException
    {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(status);
    }

    @SuppressWarnings("unchecked")
    private static void printText(final Map<String, Object> status, final PrintWriter out)
    {
        final Map<String, Object> daemon = (Map<String, Object>)status.get("daemon");
        if (daemon == null)
        {
            out.println(status.get("reason"));
            return;
        }
        final boolean running = Boolean.TRUE.equals(status.get("running"));
        out.println("xferd daemon pid " + daemon.get("pid") + ", " + (running ? "running" : "NOT RUNNING") +
            " (heartbeat " + daemon.get("heartbeat_age_ms") + " ms ago), up " + daemon.get("uptime_s") +
            " s, directory " + status.get("directory"));
        if (!running)
        {
            out.println(status.get("reason"));
        }
        final Object config = status.get("config");
        if (config instanceof Map<?, ?> settings && settings.get("peer_auth") != null)
        {
            final String peerAuth = String.valueOf(settings.get("peer_auth"));
            out.println(peerAuth.startsWith("none") ? "WARNING: peers are NOT authenticated: " + peerAuth :
                "peers: authenticated, cluster token " + settings.get("cluster_token"));
        }
        final Map<String, Object> requests = (Map<String, Object>)status.get("requests");
        out.println("requests: " + grouped(requests.get("in_flight")) + " in flight; " +
            grouped(requests.get("submitted")) + " submitted, " + grouped(requests.get("completed_ok")) + " ok, " +
            grouped(requests.get("failed")) + " failed");
        out.println("clients cut off for breaking the ring protocol: " + status.get("clients_cut_off") +
            " (malformed ring records: " + status.get("malformed_ring_records") + ")");
        out.println("journal: " + status.get("journal_write_failures") + " records not written (its files could " +
            "not be written: file system full?), " + status.get("journal_dropped") + " dropped (its ring was full)");

        final Map<String, Object> storage = (Map<String, Object>)status.get("storage");
        final List<Map<String, Object>> storageRegions = storage == null ? List.of() :
            (List<Map<String, Object>>)storage.getOrDefault("regions", List.of());
        if (storage != null)
        {
            out.println("storage: " + grouped(storage.get("bytes_read")) + " bytes read, " +
                grouped(storage.get("bytes_written")) + " written, " + grouped(storage.get("errors")) + " errors, " +
                grouped(storage.get("syncs")) + " fdatasyncs; " + storageRegions.size() + " regions" +
                (storageRegions.isEmpty() ? "" : ":"));
        }
        for (final Map<String, Object> region : storageRegions)
        {
            out.println("  " + left(region.get("segment"), 28) + " " + left(region.get("address"), 18) + " " +
                left(region.get("kind"), 5) + " " + right(grouped(region.get("bytes_read")), 16) + " read " +
                right(grouped(region.get("bytes_written")), 16) + " written " + right(grouped(region.get("errors")), 6) +
                " errors");
        }

        final List<Map<String, Object>> clients = (List<Map<String, Object>>)status.get("clients");
        if (clients != null)
        {
            out.println();
            out.println("clients (" + clients.size() + "):");
            out.println("  " + left("slot", 4) + " " + left("segment", 28) + " " + left("pid", 8) + " " +
                left("uid", 6) + " " + left("connected at", 24) + " " + right("regions", 8) + " " +
                right("registered bytes", 16));
            for (final Map<String, Object> client : clients)
            {
                out.println("  " + left(client.get("slot"), 4) + " " + left(client.get("segment"), 28) + " " +
                    left(client.get("pid"), 8) + " " + left(client.get("uid"), 6) + " " +
                    left(client.get("connected_at"), 24) + " " + right(client.get("regions"), 8) + " " +
                    right(grouped(client.get("registered_bytes")), 16));
                for (final Map<String, Object> region : (List<Map<String, Object>>)client.get("region_list"))
                {
                    out.println("       region " + left(region.get("address"), 18) + " " +
                        right(grouped(region.get("length")), 16) + " bytes  " + region.get("location") +
                        (region.get("storage") != null ? " (" + region.get("storage") + ")" : ""));
                }
            }
            final List<Object> peers = (List<Object>)status.get("peers");
            out.println();
            out.println("peers (" + peers.size() + ")" + (peers.isEmpty() ? ": none (local transfers only)" : ":"));
            peers.forEach(peer -> out.println("  " + peer));
        }
        else if (status.get("registry") != null)
        {
            out.println("registry: " + status.get("registry"));
        }

        out.println();
        out.println("NICs:");
        out.println("  " + left("name", 10) + " " + left("kind", 8) + " " + right("bytes", 20) + " " +
            right("errors", 10));
        for (final Map<String, Object> nic : (List<Map<String, Object>>)status.get("nics"))
        {
            out.println("  " + left(nic.get("name"), 10) + " " + left(nic.get("kind"), 8) + " " +
                right(grouped(nic.get("bytes")), 20) + " " + right(grouped(nic.get("errors")), 10) +
                (nic.containsKey("path") ? "  " + nic.get("state") + "  " + nic.get("path") : ""));
        }
        out.println("  rdma: " + status.get("rdma"));

        out.println();
        out.println("counters:");
        ((Map<String, Object>)status.get("counters")).forEach((label, value) ->
            out.println("  " + left(label, 45) + " " + grouped(value)));
        if (config != null)
        {
            out.println();
            out.println("config: " + config);
        }
    }

    // Plain string building, not printf: java.util.Formatter and the locale data behind %,d are ~50 classes a cold
    // status call loads for nothing. Thousands are always grouped with ',' (as %,d in the C/en locales).

    private static String left(final Object value, final int width)
    {
        final String text = String.valueOf(value);
        return text.length() >= width ? text : text + " ".repeat(width - text.length());
    }

    private static String right(final Object value, final int width)
    {
        final String text = String.valueOf(value);
        return text.length() >= width ? text : " ".repeat(width - text.length()) + text;
    }

    static String grouped(final Object number)
    {
        final long value = ((Number)number).longValue();
        final String digits = value < 0 ? Long.toString(value).substring(1) : Long.toString(value);
        final StringBuilder text = new StringBuilder(digits.length() + digits.length() / 3 + 1);
        if (value < 0)
        {
            text.append('-');
        }
        for (int i = 0; i < digits.length(); i++)
        {
            if (i > 0 && (digits.length() - i) % 3 == 0)
            {
                text.append(',');
            }
            text.append(digits.charAt(i));
        }
        return text.toString();
    }
}
