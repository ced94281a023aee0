package io.xferd.daemon;

import io.xferd.daemon.control.ConductorListener;
import io.xferd.nativebindings.libc.DatagramNotifier;
import io.xferd.nativebindings.libc.Process;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * systemd's notify protocol ({@code sd_notify(3)}, {@code Type=notify}): READY=1 once the daemon serves,
 * WATCHDOG=1 at half of {@code WATCHDOG_USEC} from the conductor's housekeeping while every data-plane thread
 * makes progress, STOPPING=1 when it begins to shut down. Without {@code NOTIFY_SOCKET} every call is a no-op.
 */
public final class SystemdNotifier implements ConductorListener
{
    private static final Logger LOG = LoggerFactory.getLogger(SystemdNotifier.class);

    private final String socket;
    private final long watchdogIntervalMs;
    private final List<LongSupplier> progress;
    private final long[] lastProgress;
    private long lastWatchdogMs;
    private boolean failedOnce;
    private volatile boolean ready;

    /**
     * @param environment the process environment ({@code System.getenv()}).
     * @param progress    counters that must all move between two watchdog pings (data-plane duty cycles).
     */
    public SystemdNotifier(final Map<String, String> environment, final List<LongSupplier> progress)
    {
        final String path = environment.get("NOTIFY_SOCKET");
        this.socket = path == null || path.isEmpty() ? null : path;
        this.progress = progress;
        this.lastProgress = new long[progress.size()];
        this.watchdogIntervalMs = watchdogIntervalMs(environment);
    }

    private static long watchdogIntervalMs(final Map<String, String> environment)
    {
        final String usec = environment.get("WATCHDOG_USEC");
        final String pid = environment.get("WATCHDOG_PID");
        if (usec == null || usec.isEmpty())
        {
            return 0;
        }
        if (pid != null && !pid.isEmpty() && !pid.equals(Long.toString(Process.pid())))
        {
            return 0;
        }
        try
        {
            return Math.max(1, Long.parseLong(usec) / 1000 / 2);
        }
        catch (final NumberFormatException ex)
        {
            LOG.warn("ignoring WATCHDOG_USEC={}: not a number", usec);
            return 0;
        }
    }

    public boolean isEnabled()
    {
        return socket != null;
    }

    public long watchdogIntervalMs()
    {
        return socket == null ? 0 : watchdogIntervalMs;
    }

    public void ready(final String status)
    {
        send("READY=1\nSTATUS=" + status + "\nMAINPID=" + Process.pid());
        ready = true;
        if (watchdogIntervalMs() > 0)
        {
            LOG.info("systemd watchdog: pinging every {} ms while the data plane makes progress", watchdogIntervalMs);
        }
    }

    public void stopping()
    {
        send("STOPPING=1\nSTATUS=draining and shutting down");
    }

    @Override
    public void onHousekeeping(final long nowMs)
    {
        if (socket == null || watchdogIntervalMs == 0 || !ready || nowMs - lastWatchdogMs < watchdogIntervalMs)
        {
            return;
        }
        for (int i = 0; i < lastProgress.length; i++)
        {
            final long value = progress.get(i).getAsLong();
            if (value == lastProgress[i])
            {
                return; // a data-plane thread is stuck: let systemd's watchdog fire
            }
        }
        for (int i = 0; i < lastProgress.length; i++)
        {
            lastProgress[i] = progress.get(i).getAsLong();
        }
        lastWatchdogMs = nowMs;
        send("WATCHDOG=1");
    }

    private void send(final String message)
    {
        if (socket == null)
        {
            return;
        }
        try
        {
            DatagramNotifier.send(socket, message);
        }
        catch (final RuntimeException ex)
        {
            if (!failedOnce)
            {
                failedOnce = true;
                LOG.warn("cannot notify systemd at {}: {}", socket, ex.getMessage());
            }
        }
    }
}
