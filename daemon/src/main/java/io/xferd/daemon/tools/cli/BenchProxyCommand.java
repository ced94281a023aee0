package io.xferd.daemon.tools.cli;

import io.xferd.proxy.bench.ProxyOverheadBench;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;

/**
 * {@code xferd bench-proxy}: the proxy's overhead per request and its requests/s, against the same requests made
 * directly, with stand-in backends in the same process (loopback only).
 */
@Command(name = "bench-proxy", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Measure xferd proxy's added latency (p50/p90/p99) and requests/s against calling stand-in " +
        "prefill and decode backends directly, in one run.")
public final class BenchProxyCommand implements Callable<Integer>
{
    @Option(names = "--requests", description = "Measured requests per path for latency, after as many for " +
        "warm-up (default: ${DEFAULT-VALUE}).")
    int requests = 2_000;

    @Option(names = "--tokens", description = "SSE events in each decode answer (default: ${DEFAULT-VALUE}).")
    int tokens = 16;

    @Option(names = "--concurrency", description = "Requests in flight in the throughput phase " +
        "(default: ${DEFAULT-VALUE}).")
    int concurrency = 64;

    @Option(names = "--seconds", description = "Length of each throughput phase (default: ${DEFAULT-VALUE}).")
    int seconds = 10;

    @Option(names = "--event-loops", description = "The proxy's event loops (default: ${DEFAULT-VALUE}).")
    int eventLoops = 1;

    @Override
    public Integer call() throws Exception
    {
        if (requests < 1 || tokens < 1 || concurrency < 1 || seconds < 1 || eventLoops < 1)
        {
            System.err.println("xferd bench-proxy: every option must be >= 1");
            return 2;
        }
        new ProxyOverheadBench(new ProxyOverheadBench.Settings(requests, tokens, concurrency, seconds, eventLoops))
            .run(System.out);
        return 0;
    }
}
