package io.xferd.client;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;

import java.nio.file.Path;

/**
 * How a client connects: the daemon's directory, this process's segment name, and the bounds on waiting.
 */
public final class ClientContext
{
    public static final String DIR_PROP_NAME = "xferd.dir";
    public static final String DIR_ENV_NAME = "XFERD_DIR";
    public static final Path DEFAULT_DIRECTORY = Path.of("/dev/shm/xferd");

    private Path directory = defaultDirectory();
    private String segmentName = "client-" + ProcessHandle.current().pid();
    private long controlTimeoutMs = 10_000;
    private long daemonCheckIntervalNs = 1_000_000;
    private IdleStrategy idleStrategy = defaultIdleStrategy();

    /** The longest one sleep of the default strategy on the completion doorbell (a daemon may never ring). */
    public static final long DEFAULT_DOORBELL_SLEEP_NS = 1_000_000;

    /** How long the default strategy parks (1 to 50 us at a time) before it sleeps on the completion doorbell. */
    public static final long DEFAULT_PARK_PHASE_NS = 1_000_000;

    /**
     * @return what a client waits with unless told otherwise: spin, yield, park 1 to 50 us at a time for up to
     * {@value #DEFAULT_PARK_PHASE_NS} ns (as the default before the doorbell: a round trip is about a microsecond, and
     * a wake-up through the kernel costs far more), then sleep on the completion ring's doorbell until the daemon
     * rings it, at most {@value #DEFAULT_DOORBELL_SLEEP_NS} ns at a time.
     */
    public static IdleStrategy defaultIdleStrategy()
    {
        return new DoorbellIdleStrategy(200, 20, DEFAULT_PARK_PHASE_NS, DEFAULT_DOORBELL_SLEEP_NS);
    }

    /**
     * @return the default before the completion doorbell: spin, yield, then park 1 to 50 us between polls.
     */
    public static IdleStrategy parkingIdleStrategy()
    {
        return new BackoffIdleStrategy(200, 20, 1_000, 50_000);
    }
    private int maxBatches = 1024;
    private boolean listen;
    private EpochClock epochClock = SystemEpochClock.INSTANCE;
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;

    static Path defaultDirectory()
    {
        final String prop = System.getProperty(DIR_PROP_NAME);
        if (prop != null)
        {
            return Path.of(prop);
        }
        final String env = System.getenv(DIR_ENV_NAME);
        return env != null ? Path.of(env) : DEFAULT_DIRECTORY;
    }

    public Path directory()
    {
        return directory;
    }

    public ClientContext directory(final Path directory)
    {
        this.directory = directory;
        return this;
    }

    public String segmentName()
    {
        return segmentName;
    }

    /**
     * Name of this process's segment, unique on the host (e.g. "prefill-0"); others open it by this name.
     */
    public ClientContext segmentName(final String segmentName)
    {
        this.segmentName = segmentName;
        return this;
    }

    public long controlTimeoutMs()
    {
        return controlTimeoutMs;
    }

    /**
     * Bound on waiting for a control answer (connect, register, open segment) and on blocking waits that
     * make no progress.
     */
    public ClientContext controlTimeoutMs(final long value)
    {
        this.controlTimeoutMs = value;
        return this;
    }

    public long daemonCheckIntervalNs()
    {
        return daemonCheckIntervalNs;
    }

    public ClientContext daemonCheckIntervalNs(final long value)
    {
        this.daemonCheckIntervalNs = value;
        return this;
    }

    public IdleStrategy idleStrategy()
    {
        return idleStrategy;
    }

    /**
     * How blocking calls wait for completions; the default backs off from spinning to sleeping on the completion
     * ring's doorbell ({@link DoorbellIdleStrategy}).
     */
    public ClientContext idleStrategy(final IdleStrategy idleStrategy)
    {
        this.idleStrategy = idleStrategy;
        return this;
    }

    public int maxBatches()
    {
        return maxBatches;
    }

    public ClientContext maxBatches(final int value)
    {
        this.maxBatches = value;
        return this;
    }

    /**
     * @return whether HELLO asks for this segment's own RPC port (Mooncake's {@code get_rpc_port}).
     */
    public boolean listen()
    {
        return listen;
    }

    public ClientContext listen(final boolean value)
    {
        this.listen = value;
        return this;
    }

    public EpochClock epochClock()
    {
        return epochClock;
    }

    /**
     * The wall clock the daemon's heartbeat is judged by; the system clock unless a test injects its own.
     */
    public ClientContext epochClock(final EpochClock clock)
    {
        this.epochClock = clock;
        return this;
    }

    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    /**
     * The monotonic clock of submit and completion times, wait deadlines and the daemon check interval;
     * {@code System.nanoTime()} unless a test injects its own.
     */
    public ClientContext nanoClock(final NanoClock clock)
    {
        this.nanoClock = clock;
        return this;
    }
}
