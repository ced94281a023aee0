package io.xferd.daemon.tools.cli;

import io.xferd.daemon.tools.bench.Units;
import io.xferd.proxy.DisaggMode;
import io.xferd.proxy.ProxyContext;
import io.xferd.proxy.ProxyServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code xferd proxy}: the OpenAI-compatible front door of a disaggregated deployment, in the foreground until
 * SIGTERM or SIGINT; SIGHUP reloads the backends from {@code --config}.
 */
@Command(name = "proxy", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "OpenAI-compatible proxy for disaggregated prefill/decode serving (vLLM V1 kv_transfer_params or V0 style).",
        "Each POST /v1/completions or /v1/chat/completions goes to the least loaded healthy prefill backend " +
            "(max_tokens 1, not streamed), then to the least loaded healthy decode backend, whose answer streams " +
            "back as it comes. GET /v1/models goes to a decode backend; GET /health is the proxy's readiness; " +
            "GET /metrics is Prometheus. SIGHUP reloads --config."},
    footer = {"", "Config file (JSON; reloaded on change and on SIGHUP; its backends are added to those given on " +
        "the command line):", "  {\"prefill\": [\"http://10.0.0.2:8010\"], \"decode\": [\"http://10.0.0.4:8020\"]}"})
public final class ProxyCommand implements Callable<Integer>
{
    @Option(names = "--listen", paramLabel = "HOST:PORT",
        description = "Address of the OpenAI endpoint (default: ${DEFAULT-VALUE}).")
    String listen = ProxyContext.DEFAULT_LISTEN;

    @Option(names = "--prefill", paramLabel = "URL", split = ",",
        description = "Prefill backends, http://host:port, comma-separated or repeated.")
    List<String> prefill = new ArrayList<>();

    @Option(names = "--decode", paramLabel = "URL", split = ",",
        description = "Decode backends, http://host:port, comma-separated or repeated.")
    List<String> decode = new ArrayList<>();

    @Option(names = "--config", paramLabel = "FILE",
        description = "JSON file of backends (see below), watched for changes.")
    Path config;

    @Option(names = "--config-poll", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "How often --config is checked for changes; 0: only on SIGHUP (default: 2s).")
    Duration configPoll = Duration.ofMillis(ProxyContext.DEFAULT_CONFIG_POLL_MS);

    @Option(names = "--mode", paramLabel = "v1|v0", description = "v1: vLLM V1 kv_transfer_params (prefill asked " +
        "to do_remote_decode, its answer's kv_transfer_params passed to decode); v0: Mooncake's V0 guide style " +
        "(prefill with max_tokens 1, decode with the client's request) (default: ${DEFAULT-VALUE}).")
    String mode = "v1";

    @Option(names = "--admin-listen", paramLabel = "HOST:PORT", description = "Address of the admin endpoint " +
        "(GET/POST/DELETE /backends?role=prefill|decode&url=..., POST /reload); keep it on loopback or a " +
        "management network. Default: none.")
    String adminListen;

    @Option(names = "--prefill-timeout", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "Longest wait for the prefill answer; 0: none (default: 300s).")
    Duration prefillTimeout = Duration.ofMillis(ProxyContext.DEFAULT_PREFILL_TIMEOUT_MS);

    @Option(names = "--first-token-timeout", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "Longest wait from the decode request to its first answer bytes; 0: none (default: 300s).")
    Duration firstTokenTimeout = Duration.ofMillis(ProxyContext.DEFAULT_FIRST_TOKEN_TIMEOUT_MS);

    @Option(names = "--idle-timeout", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "Longest silence of a decode backend between answer chunks (time the client is behind does " +
            "not count); 0: none (default: 120s).")
    Duration idleTimeout = Duration.ofMillis(ProxyContext.DEFAULT_IDLE_TIMEOUT_MS);

    @Option(names = "--connect-timeout", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "Longest wait to connect to a backend; the request then tries another. A refused " +
            "connection also ejects the backend, a slow one does not (default: 5s).")
    Duration connectTimeout = Duration.ofMillis(ProxyContext.DEFAULT_CONNECT_TIMEOUT_MS);

    @Option(names = "--max-body", paramLabel = "SIZE", converter = Units.ByteSize.class,
        description = "Largest request body; larger ones get 413 (default: 32MiB).")
    long maxBody = ProxyContext.DEFAULT_MAX_BODY_BYTES;

    @Option(names = "--max-prefill-answer", paramLabel = "SIZE", converter = Units.ByteSize.class,
        description = "Largest prefill answer (and backend error body) the proxy reads (default: 4MiB).")
    long maxPrefillAnswer = ProxyContext.DEFAULT_MAX_PREFILL_ANSWER_BYTES;

    @Option(names = "--health-interval", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "How often every backend is probed; 0: no probes (default: 2s).")
    Duration healthInterval = Duration.ofMillis(ProxyContext.DEFAULT_HEALTH_INTERVAL_MS);

    @Option(names = "--health-timeout", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "Longest wait for a probe's answer (default: 5s).")
    Duration healthTimeout = Duration.ofMillis(ProxyContext.DEFAULT_HEALTH_TIMEOUT_MS);

    @Option(names = "--health-path", paramLabel = "PATH",
        description = "Path probed on each backend; 200 is healthy (default: ${DEFAULT-VALUE}).")
    String healthPath = "/health";

    @Option(names = "--failures-to-eject", paramLabel = "N", description = "Failed probes in a row that eject a " +
        "backend (an unreachable backend is ejected at once) (default: ${DEFAULT-VALUE}).")
    int failuresToEject = ProxyContext.DEFAULT_FAILURES_TO_EJECT;

    @Option(names = "--min-eject", paramLabel = "DURATION", converter = Units.TimeSpan.class,
        description = "Shortest time an ejected backend stays out before a passing probe brings it back " +
            "(default: 5s).")
    Duration minEject = Duration.ofMillis(ProxyContext.DEFAULT_MIN_EJECT_MS);

    @Option(names = "--max-connections-per-backend", paramLabel = "N", description = "Connection pool size per " +
        "backend; each streaming request holds one (default: ${DEFAULT-VALUE}).")
    int maxConnections = ProxyContext.DEFAULT_MAX_CONNECTIONS_PER_BACKEND;

    @Option(names = "--event-loops", paramLabel = "N",
        description = "Event-loop threads (default: the number of CPUs, ${DEFAULT-VALUE}).")
    int eventLoops = Math.max(1, Runtime.getRuntime().availableProcessors());

    @Override
    public Integer call()
    {
        final ProxyContext context = new ProxyContext()
            .listen(listen)
            .prefill(prefill)
            .decode(decode)
            .configFile(config)
            .configPollMs(configPoll.toMillis())
            .adminListen(adminListen)
            .prefillTimeoutMs(prefillTimeout.toMillis())
            .firstTokenTimeoutMs(firstTokenTimeout.toMillis())
            .idleTimeoutMs(idleTimeout.toMillis())
            .connectTimeoutMs(connectTimeout.toMillis())
            .maxBodyBytes(maxBody)
            .maxPrefillAnswerBytes(maxPrefillAnswer)
            .healthIntervalMs(healthInterval.toMillis())
            .healthTimeoutMs(healthTimeout.toMillis())
            .healthPath(healthPath)
            .failuresToEject(failuresToEject)
            .minEjectMs(minEject.toMillis())
            .maxConnectionsPerBackend(maxConnections)
            .eventLoops(eventLoops);
        final ProxyServer server;
        try
        {
            context.mode(DisaggMode.parse(mode));
            server = ProxyServer.start(context);
        }
        catch (final IllegalArgumentException | IllegalStateException ex)
        {
            System.err.println("xferd proxy: " + ex.getMessage());
            return 2;
        }
        final CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("TERM"), signal -> stop.countDown());
        Signal.handle(new Signal("INT"), signal -> stop.countDown());
        if (config != null)
        {
            Signal.handle(new Signal("HUP"), signal ->
            {
                try
                {
                    server.reload();
                }
                catch (final Exception ex)
                {
                    System.err.println("xferd proxy: reload of " + config + " failed: " + ex.getMessage());
                }
            });
        }
        final String host = listen.substring(0, listen.lastIndexOf(':'));
        System.out.println("xferd proxy on http://" + host + ":" + server.port() + " (mode " +
            context.mode().name().toLowerCase(java.util.Locale.ROOT) + ", " +
            server.backends().pool(io.xferd.proxy.BackendRole.PREFILL).members().size() + " prefill, " +
            server.backends().pool(io.xferd.proxy.BackendRole.DECODE).members().size() + " decode" +
            (server.adminPort() > 0 ? ", admin on port " + server.adminPort() : "") + ")");
        System.out.flush();
        try
        {
            stop.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        server.close();
        return 0;
    }
}
