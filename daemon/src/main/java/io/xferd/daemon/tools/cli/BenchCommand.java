package io.xferd.daemon.tools.cli;

import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.client.XferException;
import io.xferd.daemon.XferDaemon;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.tools.bench.BenchClients;
import io.xferd.daemon.tools.bench.KvOverlap;
import io.xferd.daemon.tools.bench.KvWorkload;
import io.xferd.daemon.tools.bench.LatencyReport;
import io.xferd.daemon.tools.bench.ThroughputBench;
import io.xferd.daemon.tools.bench.Units;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.Opcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code xferd bench}: the end-to-end benchmark, after Mooncake's transfer_engine_bench and nixlbench. Moves
 * blocks between this process's memory and a target segment (printed by {@code xferd bench-target}, possibly on
 * another host's daemon) through the local daemon. Without {@code --target} it starts a bench-target itself
 * (and a daemon in this process when none serves {@code --dir}).
 * <p>
 * Exit codes: 0 all requests completed (and verified), 1 a request failed or a byte differed, 2 bad arguments,
 * 3 could not set up (no daemon, target not found).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"End-to-end transfer benchmark: GB/s, requests/s and per-request latency percentiles, " +
        "or (--workload kv) per-request transfer times of a Qwen2.5-7B KV cache at a given QPS.",
        "Without --target it starts a bench-target (and, when no daemon serves --dir, a daemon) itself."})
public final class BenchCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--dir", description = "Daemon directory (default: ${DEFAULT-VALUE}).")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    @Option(names = "--target", description = "Target segment, as bench-target prints it (host:port/name).")
    String target;

    @Option(names = "--target-address", description = "The target buffer's address, as bench-target prints it.")
    Long targetAddress;

    @Option(names = "--target-size", converter = Units.ByteSize.class,
        description = "The target buffer's size (with --target: as printed; without: the buffer to start).")
    Long targetSize;

    @Option(names = "--operation", defaultValue = "write", description = "read or write (default: ${DEFAULT-VALUE}).")
    String operation;

    @Option(names = "--block-size", converter = Units.ByteSize.class, defaultValue = "1MiB",
        description = "Bytes per request (default: ${DEFAULT-VALUE}).")
    long blockSize;

    @Option(names = "--random", description = "Visit the target's blocks in a seeded random order (default: in order).")
    boolean random;

    @Option(names = "--batch-size", defaultValue = "32", description = "Requests per batch (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--window", defaultValue = "4",
        description = "Batches in flight per thread (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--threads", defaultValue = "1",
        description = "Client threads, each with its own connection, segment and range (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--duration", converter = Units.TimeSpan.class, defaultValue = "10s",
        description = "Timed phase (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warmup", converter = Units.TimeSpan.class, defaultValue = "1s",
        description = "Untimed warm-up before it (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--verify", description = "Check the bytes after the timed phase (write: write a pattern and " +
        "read it back; read: compare with the pattern bench-target --pattern SEED filled in).")
    boolean verify;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of the verify pattern and the Poisson " +
        "arrivals (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--histogram-log", description = "Write the latency histograms as an HdrHistogram log.")
    Path histogramLog;

    @Option(names = "--workload", defaultValue = "throughput",
        description = "throughput or kv (default: ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--qps", defaultValue = "4", description = "kv: requests per second (default: ${DEFAULT-VALUE}).")
    double qps;

    @Option(names = "--prompt-tokens", split = ",", defaultValue = "1024,2048,4096,8192",
        description = "kv: prompt sizes, one phase each (default: ${DEFAULT-VALUE}).")
    List<Integer> promptTokens;

    @Option(names = "--requests", defaultValue = "32",
        description = "kv: arrivals per prompt size (default: ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--arrival", defaultValue = "poisson",
        description = "kv: poisson (exponential gaps) or fixed (1/QPS) (default: ${DEFAULT-VALUE}).")
    String arrival;

    @Option(names = "--max-outstanding", defaultValue = "16",
        description = "kv: requests in flight at most; later arrivals are dropped and counted " +
            "(default: ${DEFAULT-VALUE}).")
    int maxOutstanding;

    @Option(names = "--overlap", split = ",",
        description = "kv: instead of the Poisson phases, pairs FIRST:SECOND of prompt sizes (e.g. 8192:1024,1024:8192): " +
            "a second client's prompt of SECOND tokens arrives --overlap-delay after the first client's of FIRST " +
            "started, --requests rounds per pair; each size is also timed alone.")
    List<String> overlap;

    @Option(names = "--overlap-delay", converter = Units.TimeSpan.class, defaultValue = "5ms",
        description = "kv --overlap: when the second prompt arrives (default: ${DEFAULT-VALUE}).")
    Duration overlapDelay;

    @Option(names = "--client-idle", defaultValue = "doorbell",
        description = "How bench clients wait for completions: doorbell (the client library's default: spin, yield, " +
            "then sleep until the daemon rings the completion doorbell), spin (spin, yield, park up to 50 us) or " +
            "gentle (park up to 500 us, for hosts whose cores the daemons need; default: ${DEFAULT-VALUE}).")
    String clientIdle;

    @Override
    public Integer call() throws Exception
    {
        final String problem = checkArguments();
        if (problem != null)
        {
            System.err.println("bench: " + problem);
            return 2;
        }
        final boolean daemonRunning = Files.exists(directory.resolve(CncFileDescriptor.SOCKET_FILE));
        if (target != null && !daemonRunning)
        {
            System.err.println("bench: no xferd daemon in " + directory + " (start one: bin/xferd daemon --dir " +
                directory + ")");
            return 3;
        }
        XferDaemon embedded = null;
        Process targetProcess = null;
        try
        {
            if (target == null)
            {
                if (!daemonRunning)
                {
                    System.out.println("bench: no daemon in " + directory + ", starting one in this process");
                    // any free ports: a daemon already serving this host must not stop a bench (or a test)
                    final DaemonContext context = new DaemonContext().directory(directory).rpcAddress("127.0.0.1:0");
                    context.operations().metricsAddress("127.0.0.1:0");
                    embedded = XferDaemon.launch(context);
                }
                targetProcess = startTarget();
                if (target == null)
                {
                    return 3;
                }
            }
            final LatencyReport log = new LatencyReport();
            final int status;
            try (BenchClients clients = new BenchClients(directory, target, targetAddress, targetSize,
                BenchClients.idleStrategy(clientIdle)))
            {
                status = "kv".equals(workload) ? runKv(clients, log) : new ThroughputBench(clients, opcode(),
                    blockSize, batchSize, window, System.out).randomOrder(random).run(threads, warmup, duration, verify, seed, log);
            }
            if (histogramLog != null)
            {
                log.write(histogramLog);
                System.out.println("bench: histogram log written to " + histogramLog);
            }
            return status;
        }
        catch (final BenchClients.BenchSetupException | XferException ex)
        {
            System.out.println("bench: " + ex.getMessage());
            return 3;
        }
        catch (final RuntimeException ex)
        {
            System.out.println("bench: FAILED: " + ex.getMessage());
            ex.printStackTrace();
            return 1;
        }
        finally
        {
            stopTarget(targetProcess);
            if (embedded != null)
            {
                embedded.close();
            }
        }
    }

    private String checkArguments()
    {
        if (!"read".equals(operation) && !"write".equals(operation))
        {
            return "--operation must be read or write: " + operation;
        }
        if (!"throughput".equals(workload) && !"kv".equals(workload))
        {
            return "--workload must be throughput or kv: " + workload;
        }
        if (target != null && (targetAddress == null || targetSize == null))
        {
            return "--target needs --target-address and --target-size (bench-target prints all three)";
        }
        if (blockSize <= 0 || batchSize < 1 || batchSize > 65536 || window < 1 || threads < 1 || threads > 256)
        {
            return "need --block-size > 0, --batch-size 1..65536, --window >= 1, --threads 1..256";
        }
        if (!"doorbell".equals(clientIdle) && !"spin".equals(clientIdle) && !"gentle".equals(clientIdle))
        {
            return "--client-idle must be doorbell, spin or gentle: " + clientIdle;
        }
        if (duration.isNegative() || duration.isZero() || warmup.isNegative())
        {
            return "--duration must be positive and --warmup not negative";
        }
        if ("kv".equals(workload))
        {
            if (threads != 1)
            {
                return "--workload kv runs one client (one inference worker; two with --overlap) and does not take " +
                    "--threads";
            }
            if (overlap != null && overlap.stream().anyMatch(pair -> !pair.matches("[1-9][0-9]*:[1-9][0-9]*")))
            {
                return "--overlap takes FIRST:SECOND prompt sizes in tokens, e.g. 8192:1024: " + overlap;
            }
            if (qps <= 0 || requests < 1 || maxOutstanding < 1 || promptTokens.isEmpty() ||
                promptTokens.stream().anyMatch(tokens -> tokens < 1))
            {
                return "--qps, --requests, --max-outstanding and every --prompt-tokens must be positive";
            }
            if (!"poisson".equals(arrival) && !"fixed".equals(arrival))
            {
                return "--arrival must be poisson or fixed: " + arrival;
            }
        }
        return null;
    }

    private int opcode()
    {
        return "read".equals(operation) ? Opcode.READ : Opcode.WRITE;
    }

    private int runKv(final BenchClients clients, final LatencyReport log)
    {
        final List<int[]> pairs = overlap == null ? List.of() : overlap.stream()
            .map(pair -> new int[] {Integer.parseInt(pair.split(":")[0]), Integer.parseInt(pair.split(":")[1])})
            .toList();
        final int maxTokens = maxKvTokens();
        final KvWorkload kv = kvClient(clients, 0, maxTokens);
        final KvWorkload other = pairs.isEmpty() ? null : kvClient(clients, 1, maxTokens);
        // a WRITE leaves a pattern other than the one bench-target filled in, so that the bytes read back prove it
        final long pattern = opcode() == Opcode.WRITE ? seed + 1 : seed;
        if (verify)
        {
            kv.fillPattern(pattern);
            if (other != null)
            {
                other.fillPattern(pattern);
            }
        }
        final long failed;
        if (pairs.isEmpty())
        {
            System.out.printf("bench: kv workload, %s of Qwen2.5-7B KV cache, prompts of %s tokens, %s arrivals at " +
                "%.1f QPS, %d per prompt size, target %s%n", operation, promptTokens, arrival, qps, requests, target);
            if (!warmup.isZero())
            {
                kv.warmUp(promptTokens.get(0), warmup);
            }
            failed = kv.run(promptTokens, qps, "poisson".equals(arrival), requests, seed, log);
        }
        else
        {
            System.out.printf("bench: kv overlap, %s of Qwen2.5-7B KV cache, two clients, pairs %s, the second " +
                "prompt %s after the first, %d rounds each, target %s%n", operation, overlap, overlapDelay, requests,
                target);
            if (!warmup.isZero())
            {
                kv.warmUp(pairs.getFirst()[0], warmup);
            }
            failed = new KvOverlap(kv, other, operation, System.out).run(pairs, requests, overlapDelay, log);
        }
        if (failed > 0)
        {
            System.out.println("bench: FAILED " + failed + " KV request(s)");
        }
        if (verify && !verifyKv(clients, kv, 0, pattern) | (other != null && !verifyKv(clients, other, 1, pattern)))
        {
            return 1;
        }
        return failed == 0 ? 0 : 1;
    }

    /**
     * @return the largest prompt the KV workload moves: of --overlap's pairs when given, else of --prompt-tokens.
     */
    private int maxKvTokens()
    {
        return overlap == null || overlap.isEmpty() ? Collections.max(promptTokens) : overlap.stream()
            .flatMap(pair -> java.util.Arrays.stream(pair.split(":"))).mapToInt(Integer::parseInt).max().orElseThrow();
    }

    private KvWorkload kvClient(final BenchClients clients, final int index, final int maxTokens)
    {
        final XferClient client = clients.connect(index);
        final SharedBuffer local = clients.allocate(client, KvWorkload.localBytes(maxTokens));
        return new KvWorkload(client, clients.openTarget(client), opcode(), local, maxTokens, targetAddress,
            targetSize, maxOutstanding, System.out);
    }

    private boolean verifyKv(final BenchClients clients, final KvWorkload kv, final int index, final long pattern)
    {
        final long checked = kv.verify(pattern, clients.allocate(kv.client(), KvWorkload.verifyBytes()));
        if (checked < 0)
        {
            System.out.println("bench: VERIFY FAILED: KV block " + (-checked - 1) + " of client " + index +
                " does not hold the pattern of seed " + pattern);
            return false;
        }
        System.out.printf("bench: verified %d KV blocks (%s) of client %d: every byte as written%n", checked,
            Units.formatBytes(checked * KvWorkload.blockBytes()), index);
        return true;
    }

    /**
     * Start {@code xferd bench-target} on the same daemon and take its TARGET line.
     */
    private Process startTarget() throws IOException
    {
        final long size = targetSize != null ? targetSize : "kv".equals(workload) ?
            KvWorkload.localBytes(maxKvTokens()) :
            threads * ThroughputBench.spanPerThread(Long.MAX_VALUE / 2, 1, blockSize);
        final Process process = JavaProcesses.builder(XferdMain.class, List.of("bench-target",
            "--dir", directory.toString(), "--size", Long.toString(size), "--pattern", Long.toString(seed)))
            .redirectErrorStream(true).start();
        final BufferedReader output =
            new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = output.readLine()) != null)
        {
            if (line.startsWith("TARGET "))
            {
                final String[] fields = line.split(" ");
                target = fields[1];
                targetAddress = Long.parseLong(fields[2]);
                targetSize = Long.parseLong(fields[3]);
                break;
            }
            System.out.println("target: " + line);
        }
        if (target == null)
        {
            System.out.println("bench: the bench-target process ended before it printed its TARGET line");
        }
        Thread.ofPlatform().daemon().name("bench-target-output").start(() -> forward(output));
        return process;
    }

    private static void forward(final BufferedReader output)
    {
        try
        {
            String line;
            while ((line = output.readLine()) != null)
            {
                System.out.println("target: " + line);
            }
        }
        catch (final IOException ignore)
        {
            // the target is gone
        }
    }

    private static void stopTarget(final Process process) throws InterruptedException
    {
        if (process == null)
        {
            return;
        }
        try
        {
            process.getOutputStream().close(); // bench-target exits when its stdin closes
        }
        catch (final IOException ignore)
        {
            // already gone
        }
        if (!process.waitFor(10, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
        }
    }
}
