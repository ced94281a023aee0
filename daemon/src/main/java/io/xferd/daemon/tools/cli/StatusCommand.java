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
        out.printf("xferd daemon pid %s, %s (heartbeat %s ms ago), up %s s, directory %s%n", daemon.get("pid"),
            running ? "running" : "NOT RUNNING", daemon.get("heartbeat_age_ms"), daemon.get("uptime_s"),
            status.get("directory"));
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
        out.printf("requests: %,d in flight; %,d submitted, %,d ok, %,d failed%n", requests.get("in_flight"),
            requests.get("submitted"), requests.get("completed_ok"), requests.get("failed"));
        out.printf("clients cut off for breaking the ring protocol: %s (malformed ring records: %s)%n",
            status.get("clients_cut_off"), status.get("malformed_ring_records"));
        out.printf("journal: %s records not written (its files could not be written: file system full?), %s " +
            "dropped (its ring was full)%n", status.get("journal_write_failures"), status.get("journal_dropped"));

        final List<Map<String, Object>> clients = (List<Map<String, Object>>)status.get("clients");
        if (clients != null)
        {
            out.printf("%nclients (%d):%n", clients.size());
            out.printf("  %-4s %-28s %-8s %-6s %-24s %8s %16s%n", "slot", "segment", "pid", "uid", "connected at",
                "regions", "registered bytes");
            for (final Map<String, Object> client : clients)
            {
                out.printf("  %-4s %-28s %-8s %-6s %-24s %8s %,16d%n", client.get("slot"), client.get("segment"),
                    client.get("pid"), client.get("uid"), client.get("connected_at"), client.get("regions"),
                    ((Number)client.get("registered_bytes")).longValue());
                for (final Map<String, Object> region : (List<Map<String, Object>>)client.get("region_list"))
                {
                    out.printf("       region %-18s %,16d bytes  %s%s%n", region.get("address"),
                        ((Number)region.get("length")).longValue(), region.get("location"),
                        region.get("storage") != null ? " (" + region.get("storage") + ")" : "");
                }
            }
            final List<Object> peers = (List<Object>)status.get("peers");
            out.printf("%npeers (%d)%s%n", peers.size(), peers.isEmpty() ? ": none (local transfers only)" : ":");
            peers.forEach(peer -> out.println("  " + peer));
        }
        else if (status.get("registry") != null)
        {
            out.println("registry: " + status.get("registry"));
        }

        out.printf("%nNICs:%n  %-10s %-8s %20s %10s%n", "name", "kind", "bytes", "errors");
        for (final Map<String, Object> nic : (List<Map<String, Object>>)status.get("nics"))
        {
            out.printf("  %-10s %-8s %,20d %,10d%s%n", nic.get("name"), nic.get("kind"),
                ((Number)nic.get("bytes")).longValue(), ((Number)nic.get("errors")).longValue(),
                nic.containsKey("path") ? "  " + nic.get("state") + "  " + nic.get("path") : "");
        }
        out.println("  rdma: " + status.get("rdma"));

        out.printf("%ncounters:%n");
        ((Map<String, Object>)status.get("counters")).forEach((label, value) ->
            out.printf("  %-45s %,d%n", label, ((Number)value).longValue()));
        if (config != null)
        {
            out.printf("%nconfig: %s%n", config);
        }
    }
}
