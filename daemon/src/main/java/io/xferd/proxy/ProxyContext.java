package io.xferd.proxy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything {@code xferd proxy} is configured with, set once before {@link ProxyServer#start}; {@link #conclude()}
 * checks it. Times are milliseconds; a timeout of 0 means none.
 */
public final class ProxyContext
{
    public static final String DEFAULT_LISTEN = "0.0.0.0:8000";
    public static final long DEFAULT_PREFILL_TIMEOUT_MS = 300_000;
    public static final long DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 300_000;
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 120_000;
    public static final long DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
    public static final long DEFAULT_MAX_BODY_BYTES = 32L << 20;
    public static final long DEFAULT_MAX_PREFILL_ANSWER_BYTES = 4L << 20;
    public static final long DEFAULT_HEALTH_INTERVAL_MS = 2_000;
    public static final long DEFAULT_HEALTH_TIMEOUT_MS = 5_000;
    public static final int DEFAULT_FAILURES_TO_EJECT = 3;
    public static final long DEFAULT_MIN_EJECT_MS = 5_000;
    public static final int DEFAULT_MAX_CONNECTIONS_PER_BACKEND = 4_096;
    public static final long DEFAULT_CONFIG_POLL_MS = 2_000;

    private String listen = DEFAULT_LISTEN;
    private String adminListen;
    private final List<String> prefill = new ArrayList<>();
    private final List<String> decode = new ArrayList<>();
    private Path configFile;
    private long configPollMs = DEFAULT_CONFIG_POLL_MS;
    private DisaggMode mode = DisaggMode.V1;
    private long prefillTimeoutMs = DEFAULT_PREFILL_TIMEOUT_MS;
    private long firstTokenTimeoutMs = DEFAULT_FIRST_TOKEN_TIMEOUT_MS;
    private long idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS;
    private long connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
    private long maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    private long maxPrefillAnswerBytes = DEFAULT_MAX_PREFILL_ANSWER_BYTES;
    private long healthIntervalMs = DEFAULT_HEALTH_INTERVAL_MS;
    private long healthTimeoutMs = DEFAULT_HEALTH_TIMEOUT_MS;
    private String healthPath = "/health";
    private int failuresToEject = DEFAULT_FAILURES_TO_EJECT;
    private long minEjectMs = DEFAULT_MIN_EJECT_MS;
    private int maxConnectionsPerBackend = DEFAULT_MAX_CONNECTIONS_PER_BACKEND;
    private int eventLoops = Math.max(1, Runtime.getRuntime().availableProcessors());

    /**
     * @throws IllegalArgumentException naming the first option that is wrong.
     */
    public ProxyContext conclude()
    {
        HostPort.parse(listen, "--listen");
        if (adminListen != null)
        {
            HostPort.parse(adminListen, "--admin-listen");
        }
        prefill.forEach(BackendAddress::parse);
        decode.forEach(BackendAddress::parse);
        if (configFile == null && (prefill.isEmpty() || decode.isEmpty()) && adminListen == null)
        {
            throw new IllegalArgumentException("give --prefill and --decode backends, a --config file, or an " +
                "--admin-listen address to add them at run time");
        }
        requireAtLeast(prefillTimeoutMs, 0, "--prefill-timeout");
        requireAtLeast(firstTokenTimeoutMs, 0, "--first-token-timeout");
        requireAtLeast(idleTimeoutMs, 0, "--idle-timeout");
        requireAtLeast(connectTimeoutMs, 1, "--connect-timeout");
        requireAtLeast(maxBodyBytes, 1, "--max-body");
        requireAtLeast(maxPrefillAnswerBytes, 1, "--max-prefill-answer");
        requireAtLeast(healthIntervalMs, 0, "--health-interval");
        requireAtLeast(healthTimeoutMs, 1, "--health-timeout");
        requireAtLeast(failuresToEject, 1, "--failures-to-eject");
        requireAtLeast(minEjectMs, 0, "--min-eject");
        requireAtLeast(maxConnectionsPerBackend, 1, "--max-connections-per-backend");
        requireAtLeast(eventLoops, 1, "--event-loops");
        requireAtLeast(configPollMs, 0, "--config-poll");
        if (!healthPath.startsWith("/"))
        {
            throw new IllegalArgumentException("--health-path must start with '/'");
        }
        if (maxBodyBytes > Integer.MAX_VALUE - 8 || maxPrefillAnswerBytes > Integer.MAX_VALUE - 8)
        {
            throw new IllegalArgumentException("--max-body and --max-prefill-answer must be under 2 GiB");
        }
        return this;
    }

    private static void requireAtLeast(final long value, final long least, final String option)
    {
        if (value < least)
        {
            throw new IllegalArgumentException(option + " must be >= " + least + ", not " + value);
        }
    }

    public String listen()
    {
        return listen;
    }

    public ProxyContext listen(final String listen)
    {
        this.listen = listen;
        return this;
    }

    /**
     * @return where the admin endpoint listens, null when there is none.
     */
    public String adminListen()
    {
        return adminListen;
    }

    public ProxyContext adminListen(final String adminListen)
    {
        this.adminListen = adminListen;
        return this;
    }

    public List<String> prefill()
    {
        return prefill;
    }

    public ProxyContext prefill(final List<String> urls)
    {
        prefill.addAll(urls);
        return this;
    }

    public List<String> decode()
    {
        return decode;
    }

    public ProxyContext decode(final List<String> urls)
    {
        decode.addAll(urls);
        return this;
    }

    public Path configFile()
    {
        return configFile;
    }

    public ProxyContext configFile(final Path configFile)
    {
        this.configFile = configFile;
        return this;
    }

    public long configPollMs()
    {
        return configPollMs;
    }

    public ProxyContext configPollMs(final long configPollMs)
    {
        this.configPollMs = configPollMs;
        return this;
    }

    public DisaggMode mode()
    {
        return mode;
    }

    public ProxyContext mode(final DisaggMode mode)
    {
        this.mode = mode;
        return this;
    }

    public long prefillTimeoutMs()
    {
        return prefillTimeoutMs;
    }

    public ProxyContext prefillTimeoutMs(final long prefillTimeoutMs)
    {
        this.prefillTimeoutMs = prefillTimeoutMs;
        return this;
    }

    public long firstTokenTimeoutMs()
    {
        return firstTokenTimeoutMs;
    }

    public ProxyContext firstTokenTimeoutMs(final long firstTokenTimeoutMs)
    {
        this.firstTokenTimeoutMs = firstTokenTimeoutMs;
        return this;
    }

    public long idleTimeoutMs()
    {
        return idleTimeoutMs;
    }

    public ProxyContext idleTimeoutMs(final long idleTimeoutMs)
    {
        this.idleTimeoutMs = idleTimeoutMs;
        return this;
    }

    public long connectTimeoutMs()
    {
        return connectTimeoutMs;
    }

    public ProxyContext connectTimeoutMs(final long connectTimeoutMs)
    {
        this.connectTimeoutMs = connectTimeoutMs;
        return this;
    }

    public long maxBodyBytes()
    {
        return maxBodyBytes;
    }

    public ProxyContext maxBodyBytes(final long maxBodyBytes)
    {
        this.maxBodyBytes = maxBodyBytes;
        return this;
    }

    public long maxPrefillAnswerBytes()
    {
        return maxPrefillAnswerBytes;
    }

    public ProxyContext maxPrefillAnswerBytes(final long maxPrefillAnswerBytes)
    {
        this.maxPrefillAnswerBytes = maxPrefillAnswerBytes;
        return this;
    }

    public long healthIntervalMs()
    {
        return healthIntervalMs;
    }

    public ProxyContext healthIntervalMs(final long healthIntervalMs)
    {
        this.healthIntervalMs = healthIntervalMs;
        return this;
    }

    public long healthTimeoutMs()
    {
        return healthTimeoutMs;
    }

    public ProxyContext healthTimeoutMs(final long healthTimeoutMs)
    {
        this.healthTimeoutMs = healthTimeoutMs;
        return this;
    }

    public String healthPath()
    {
        return healthPath;
    }

    public ProxyContext healthPath(final String healthPath)
    {
        this.healthPath = healthPath;
        return this;
    }

    public int failuresToEject()
    {
        return failuresToEject;
    }

    public ProxyContext failuresToEject(final int failuresToEject)
    {
        this.failuresToEject = failuresToEject;
        return this;
    }

    public long minEjectMs()
    {
        return minEjectMs;
    }

    public ProxyContext minEjectMs(final long minEjectMs)
    {
        this.minEjectMs = minEjectMs;
        return this;
    }

    public int maxConnectionsPerBackend()
    {
        return maxConnectionsPerBackend;
    }

    public ProxyContext maxConnectionsPerBackend(final int maxConnectionsPerBackend)
    {
        this.maxConnectionsPerBackend = maxConnectionsPerBackend;
        return this;
    }

    public int eventLoops()
    {
        return eventLoops;
    }

    public ProxyContext eventLoops(final int eventLoops)
    {
        this.eventLoops = eventLoops;
        return this;
    }
}
