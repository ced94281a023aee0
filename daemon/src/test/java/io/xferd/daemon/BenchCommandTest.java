package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd bench} as a user runs it, against a daemon in this JVM: throughput in both directions with every
 * byte verified, the two-role form (a bench-target started apart, its TARGET line passed on), the KV workload,
 * and the failures a bench must not hide (bytes that differ, a target that does not exist).
 */
@Tag("integration")
@Timeout(60)
class BenchCommandTest
{
    private static final Duration EXIT = Duration.ofSeconds(40);

    private Path directory;
    private XferDaemon daemon;
    private final List<ChildProcess> children = new ArrayList<>();

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
    }

    @AfterEach
    void stopEverything()
    {
        children.forEach(ChildProcess::close);
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    private ChildProcess xferd(final String name, final String... args)
    {
        final List<String> all = new ArrayList<>(List.of(args));
        all.addAll(1, List.of("--dir", directory.toString()));
        final ChildProcess child = ChildProcess.start(name, XferdMain.class, all.toArray(String[]::new));
        children.add(child);
        return child;
    }

    @Test
    void shouldWriteWithTwoThreadsThenReadBackAndVerify()
    {
        final ChildProcess bench = xferd("bench", "bench", "--operation", "write", "--block-size", "256KiB",
            "--batch-size", "8", "--threads", "2", "--warmup", "200ms", "--duration", "500ms", "--verify");

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isZero();
        assertThat(bench.output())
            .contains("GB/s", "requests/s", "p50", "p90", "p99", "p99.9", "max")
            .containsPattern("RESULT mode=throughput operation=write block_size=262144 batch_size=8 window=4 " +
                "threads=2 .* failed=0 gb_per_s=[0-9.]+ requests_per_s=[0-9.]+ p50_us=[0-9.]+")
            .contains("verify: OK");
    }

    @Test
    void shouldReadFromABenchTargetStartedApartAndVerifyItsPattern()
    {
        final ChildProcess target = xferd("target", "bench-target", "--name", "kv-target", "--size", "8MiB",
            "--pattern", "7");
        final String[] line = target.awaitLine("TARGET ", SystemTests.WAIT).split(" ");
        assertThat(line[1]).isEqualTo(daemon.rpcAddress() + "/kv-target");
        assertThat(line[3]).isEqualTo(Long.toString(8L << 20));

        final ChildProcess bench = xferd("bench", "bench", "--target", line[1], "--target-address", line[2],
            "--target-size", line[3], "--operation", "read", "--block-size", "64KiB", "--threads", "2",
            "--warmup", "0s", "--duration", "500ms", "--verify", "--seed", "7", "--client-idle", "gentle");

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isZero();
        assertThat(bench.output()).contains("RESULT mode=throughput operation=read", "failed=0",
            "verify: OK, 8 MiB read");
        assertThat(target.isAlive()).as("the target stays until it is told to go").isTrue();
    }

    @Test
    void shouldFailWhenTheBytesReadAreNotThePattern()
    {
        final ChildProcess target = xferd("target", "bench-target", "--name", "zeros", "--size", "1MiB");
        final String[] line = target.awaitLine("TARGET ", SystemTests.WAIT).split(" ");

        final ChildProcess bench = xferd("bench", "bench", "--target", line[1], "--target-address", line[2],
            "--target-size", line[3], "--operation", "read", "--block-size", "64KiB", "--warmup", "0s",
            "--duration", "200ms", "--verify");

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isEqualTo(1);
        assertThat(bench.output()).contains("verify: FAILED", "--pattern 42");
    }

    @Test
    void shouldRefuseAnUnknownClientIdleStrategy()
    {
        final ChildProcess bench = xferd("bench", "bench", "--client-idle", "nap", "--duration", "1s");

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isEqualTo(2);
        assertThat(bench.output()).contains("--client-idle must be doorbell, spin or gentle: nap");
    }

    @Test
    void shouldSayWhenTheTargetSegmentDoesNotExist()
    {
        final ChildProcess bench = xferd("bench", "bench", "--target", "127.0.0.1:0/nobody",
            "--target-address", "4096", "--target-size", "1MiB", "--duration", "1s");

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isEqualTo(3);
        assertThat(bench.output()).contains("cannot open the target segment 127.0.0.1:0/nobody");
    }

    @Test
    void shouldReplayTheKvWorkloadAndWriteTheHistogramLog() throws IOException
    {
        final Path log = directory.resolve("kv.hlog");
        final ChildProcess bench = xferd("bench", "bench", "--workload", "kv", "--qps", "20", "--arrival", "fixed",
            "--prompt-tokens", "64,256", "--requests", "6", "--warmup", "0s", "--histogram-log", log.toString());

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isZero();
        assertThat(bench.output())
            .contains("transfer time (first submit -> last completion), ms: p50")
            .contains("RESULT mode=kv operation=write tokens=64 bytes=" + 64 * 57_344 + " qps=20.00 arrival=fixed " +
                "requests=6 completed=6 dropped=0 failed=0")
            .contains("RESULT mode=kv operation=write tokens=256 bytes=" + 256 * 57_344)
            .doesNotContain("NOT KEEPING UP");
        // the fields perf/bench-netns.sh reads: every completed prompt ran alone or overlapped another, and the
        // slowest one's arrival number, overlap share, submit span and trace id (for xferd profile --trace)
        final java.util.regex.Matcher kv = java.util.regex.Pattern.compile("RESULT mode=kv .* completed=(\\d+) .* " +
            "alone=(\\d+) .* overlapped=(\\d+) .* slowest_ordinal=(\\d+) slowest_overlap=([0-9.]+) " +
            "slowest_submit_span_ms=([0-9.]+) slowest_trace=([0-9a-f]+)").matcher(bench.output());
        int phases = 0;
        while (kv.find())
        {
            phases++;
            assertThat(Integer.parseInt(kv.group(2)) + Integer.parseInt(kv.group(3))).as(kv.group())
                .isEqualTo(Integer.parseInt(kv.group(1)));
            assertThat(Integer.parseInt(kv.group(4))).as(kv.group()).isBetween(1, 6);
            assertThat(Double.parseDouble(kv.group(5))).as(kv.group()).isBetween(0.0, 1.0);
            assertThat(Double.parseDouble(kv.group(6))).as(kv.group()).isGreaterThanOrEqualTo(0.0);
            assertThat(Long.parseUnsignedLong(kv.group(7), 16)).as(kv.group()).isNotZero();
        }
        assertThat(phases).as(bench.output()).isEqualTo(2);
        final String histograms = Files.readString(log);
        assertThat(histograms).contains("Histogram log format version", "Tag=kv-64-qps20.0", "Tag=kv-256-qps20.0");
    }

    @Test
    void shouldTimeTwoClientsPromptsInBothOrdersAndVerifyEveryByteTheyWrote()
    {
        final ChildProcess bench = xferd("bench", "bench", "--workload", "kv", "--overlap", "256:64,64:256",
            "--overlap-delay", "1ms", "--requests", "2", "--warmup", "0s", "--verify");

        assertThat(bench.awaitExit(EXIT)).as(bench.output()).isZero();
        assertThat(bench.output())
            .contains("RESULT mode=kv-overlap operation=write order=alone tokens=64 other_tokens=64 role=alone " +
                "bytes=" + 64 * 57_344)
            .contains("RESULT mode=kv-overlap operation=write order=256:64 tokens=256 other_tokens=64 role=first")
            .contains("RESULT mode=kv-overlap operation=write order=256:64 tokens=64 other_tokens=256 role=second")
            .contains("RESULT mode=kv-overlap operation=write order=64:256 tokens=256 other_tokens=64 role=second")
            .contains("verified 448 KV blocks").contains("of client 0: every byte as written")
            .contains("of client 1: every byte as written")
            .doesNotContain("FAILED");
        final java.util.regex.Matcher share = java.util.regex.Pattern.compile("RESULT mode=kv-overlap-share " +
            "operation=write order=256:64 tokens=64 other_tokens=256 role=second other_bytes_during_p50=(\\d+) " +
            "other_bytes_during_max=(\\d+)").matcher(bench.output());
        assertThat(share.find()).as("what the second prompt waited behind: " + bench.output()).isTrue();
        assertThat(Long.parseLong(share.group(1))).as("p50 of the first's bytes during the second").isNotNegative()
            .isLessThanOrEqualTo(Long.parseLong(share.group(2)));
        assertThat(Long.parseLong(share.group(2))).as("never more than the whole first prompt")
            .isLessThanOrEqualTo(256L * 57_344);
    }
}
