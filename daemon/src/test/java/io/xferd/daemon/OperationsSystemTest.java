package io.xferd.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.statusmap.StatusMapFile;
import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator's view of a real daemon process with a real client: {@code xferd status} (text and JSON) shows the
 * client, its region, the requests and the ring while it runs and says clearly when no daemon runs; the
 * Prometheus endpoint serves counts, bytes and errors by op/peer/NIC/status and the latency histogram; every
 * request lands in the journal, which {@code xferd profile} turns into percentile tables, an HTML page and one
 * request's story by its trace id.
 */
@Tag("integration")
@Timeout(120)
class OperationsSystemTest
{
    private static final int KIB = 1024;
    private static final int REQUESTS = 100;
    private static final long TRACE_BASE = 0xfeed0000L;

    private Path directory;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void createDirectory()
    {
        directory = SystemTests.newDaemonDirectory();
    }

    @AfterEach
    void stopEverything() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldShowStatusServeMetricsAndJournalEveryRequest() throws Exception
    {
        final ChildProcess daemon = new ChildProcessHolder(ChildProcess.start("daemon", XferdMain.class, "daemon",
            "--dir", directory.toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "127.0.0.1:0",
            "--slow-request-ms", "0")).track();
        final String metricsLine = daemon.awaitLine("metrics on http://", WAIT);
        daemon.awaitLine("xferd daemon serving", SystemTests.DAEMON_START);
        final Matcher port = Pattern.compile("127\\.0\\.0\\.1:(\\d+)/metrics").matcher(metricsLine);
        assertThat(port.find()).as(metricsLine).isTrue();
        final URI metrics = URI.create("http://127.0.0.1:" + port.group(1) + "/metrics");

        final XferClient client = XferClient.connect(SystemTests.clientContext(directory, "prefill"));
        resources.add(client);
        final SharedBuffer buffer = client.allocateMemory(4 * KIB * KIB);
        client.registerMemory(buffer, "cpu:0");
        final long batch = client.allocateBatch(REQUESTS + 1);
        for (int i = 0; i < REQUESTS; i++)
        {
            client.submitTransfer(batch, TransferRequest.write(buffer.address() + (i % 16) * 64L * KIB,
                client.ownSegment(), buffer.address() + 2L * KIB * KIB + (i % 16) * 64L * KIB, 64 * KIB)
                .traceId(TRACE_BASE + i));
        }
        // one that fails: the target range is not registered
        client.submitTransfer(batch, TransferRequest.write(buffer.address(), client.ownSegment(),
            buffer.address() + 64L * KIB * KIB, 64 * KIB).traceId(TRACE_BASE + REQUESTS));
        assertThat(client.awaitBatch(batch, 10_000)).as("one request must fail").isFalse();

        // status, JSON and text, while the client is connected
        final CliRun json = cli("status", "--dir", directory.toString(), "--json");
        assertThat(json.exitCode).as(json.out).isZero();
        final JsonNode status = new ObjectMapper().readTree(json.out);
        assertThat(status.path("running").asBoolean()).isTrue();
        assertThat(status.path("daemon").path("pid").asLong()).isEqualTo(daemon.pid());
        final JsonNode clientNode = status.path("clients").get(0);
        assertThat(clientNode.path("segment").asText()).isEqualTo("prefill");
        assertThat(clientNode.path("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
        assertThat(clientNode.path("registered_bytes").asLong()).isEqualTo(4L * KIB * KIB);
        assertThat(clientNode.path("region_list").get(0).path("address").asText())
            .isEqualTo("0x" + Long.toHexString(buffer.address()));
        assertThat(clientNode.path("region_list").get(0).path("location").asText()).isEqualTo("cpu:0");
        assertThat(status.path("requests").path("submitted").asLong()).isEqualTo(REQUESTS + 1);
        assertThat(status.path("requests").path("failed").asLong()).isEqualTo(1);
        assertThat(status.path("requests").path("in_flight").asLong()).isZero();
        assertThat(status.path("clients_cut_off").asLong()).isZero();
        assertThat(status.path("malformed_ring_records").asLong()).isZero();
        assertThat(status.path("nics").get(0).path("name").asText()).isEqualTo("shm");
        assertThat(status.path("nics").get(0).path("bytes").asLong()).isEqualTo(REQUESTS * 64L * KIB);
        assertThat(status.path("config").path("journal").asBoolean()).isTrue();
        final CliRun text = cli("status", "--dir", directory.toString());
        assertThat(text.exitCode).isZero();
        assertThat(text.out).contains("running", "prefill", "region 0x" + Long.toHexString(buffer.address()),
            "clients cut off for breaking the ring protocol: 0", "shm");

        // metrics: read at scrape time; the journal agent's totals arrive within its next duty cycles
        final String ok = "xferd_transfers_total{nic=\"shm\",op=\"write\",peer=\"local\",status=\"ok\"} " +
            REQUESTS + ".0";
        final String failed = "xferd_transfer_errors_total{nic=\"shm\",op=\"write\",peer=\"local\"," +
            "status=\"target_range_not_registered\"} 1.0";
        final String[] scraped = new String[1];
        // both: the failed request's record may reach the journal agent after the last successful one
        SystemTests.awaitCondition(() -> (scraped[0] = scrape(metrics)).contains(ok) && scraped[0].contains(failed),
            WAIT, () -> "metrics with " + ok + " and " + failed + ":\n" + scraped[0]);
        assertThat(scraped[0]).contains(
            "xferd_transfer_errors_total{nic=\"shm\",op=\"write\",peer=\"local\",status=\"target_range_not_registered\"} 1.0",
            "xferd_transfer_bytes_total{nic=\"shm\",op=\"write\",peer=\"local\",status=\"ok\"} " +
                (REQUESTS * 64 * KIB) + ".0",
            "xferd_transfer_latency_seconds_count{nic=\"shm\",op=\"write\",peer=\"local\"} " + REQUESTS,
            "xferd_transfer_latency_seconds_bucket{nic=\"shm\",op=\"write\",peer=\"local\",le=\"+Inf\"} " + REQUESTS,
            "xferd_clients 1.0", "xferd_registered_bytes 4194304.0", "xferd_requests_in_flight 0.0",
            "xferd_clients_cut_off_total 0.0", "xferd_journal_dropped_records_total 0.0",
            "# TYPE xferd_transfer_latency_seconds histogram");

        client.close();
        daemon.terminate();
        assertThat(daemon.awaitExit(WAIT)).as(daemon.output()).isZero();
        assertThat(directory.resolve(StatusMapFile.FILE)).doesNotExist();
        assertThat(daemon.output()).contains("slow request: trace feed0000");

        final CliRun stopped = cli("status", "--dir", directory.toString());
        assertThat(stopped.exitCode).isEqualTo(1);
        assertThat(stopped.out).contains("no xferd daemon in " + directory);

        // the journal, read after the daemon stopped
        final Path journal = directory.resolve("journal");
        final Path html = directory.resolve("profile.html");
        final String trace = Long.toHexString(TRACE_BASE + 7);
        final CliRun profile = cli("profile", journal.toString(), "--html", html.toString(), "--trace", trace);
        assertThat(profile.exitCode).as(profile.out + profile.err).isZero();
        assertThat(profile.out).contains(REQUESTS + 1 + " completed request(s)", "TARGET_RANGE_NOT_REGISTERED=1",
            "by operation", "by size", "by peer", "by nic", "stages", "queue wait", "execution");
        assertThat(profile.out).containsPattern("WRITE\\s+" + REQUESTS + "\\s")
            .containsPattern("<=64K\\s+" + REQUESTS + "\\s").containsPattern("local\\s+" + REQUESTS + "\\s")
            .containsPattern("shm\\s+" + REQUESTS + "\\s");
        // a request that ran inline on intake's thread (alone in its pass) is journaled by its COMPLETED record alone
        assertThat(profile.out).containsPattern("trace " + trace + ": [12] record\\(s\\)")
            .contains("completed  request");
        assertThat(Files.readString(html)).contains("<svg", "<polyline", "By operation", "WRITE")
            .doesNotContain("<script", "src=", "href=");

        assertThat(cli("profile", journal.toString(), "--since", "1h").out)
            .contains(REQUESTS + 1 + " completed request(s)");
        assertThat(cli("profile", journal.toString(), "--until", "1h").out).contains("no completed requests");
        assertThat(cli("profile", journal.toString(), "--since", "yesterday").exitCode).isEqualTo(2);
    }

    private static String scrape(final URI uri)
    {
        try (HttpClient http = HttpClient.newHttpClient())
        {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }

    private record CliRun(int exitCode, String out, String err)
    {
    }

    private static CliRun cli(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine commandLine = XferdMain.commandLine(args);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        final int code = commandLine.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }

    private final class ChildProcessHolder
    {
        private final ChildProcess child;

        ChildProcessHolder(final ChildProcess child)
        {
            this.child = child;
        }

        ChildProcess track()
        {
            resources.add(child);
            return child;
        }
    }
}
