package io.xferd.daemon.statusmap;

import io.xferd.daemon.control.ConductorListener;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The registry's Chronicle Map, opened on a thread of its own so that it is not on the daemon's path to "serving"
 * (opening it costs about a second of class loading and mapping). Until it is open the conductor's events are not
 * written anywhere, only the live clients are remembered; the first housekeeping pass after it opened writes every
 * live client and its regions (the registry is a table of what is, not a log: nothing is lost by writing it late),
 * and from then on every event goes straight through. All writes happen on the conductor thread.
 */
public final class DeferredStatusMap implements ConductorListener, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(DeferredStatusMap.class);
    private static final long CLOSE_WAIT_MS = 30_000;

    private final Map<Integer, ClientSession> live = new LinkedHashMap<>();
    private final Thread opener;
    private volatile StatusMapWriter opened;
    /** Written on the conductor thread only; volatile for {@link #isWriting()} from others. */
    private volatile StatusMapWriter writer;

    private DeferredStatusMap(final Supplier<StatusMapWriter> open)
    {
        this.opener = new Thread(() ->
        {
            try
            {
                opened = open.get();
            }
            catch (final RuntimeException | Error ex)
            {
                LOG.warn("the registry could not be opened (observers reading it see nothing; xferd status reads " +
                    StatusFileDescriptor.FILE + "): {}", ex.toString());
            }
        }, "xferd-registry-open");
        opener.setDaemon(true);
    }

    /**
     * @param open creates the registry (on the thread {@link #start()} starts).
     */
    public static DeferredStatusMap of(final Supplier<StatusMapWriter> open)
    {
        return new DeferredStatusMap(open);
    }

    /**
     * Start opening the registry.
     */
    public void start()
    {
        opener.start();
    }

    /**
     * @return true once the conductor writes the registry (every change from then on).
     */
    public boolean isWriting()
    {
        return writer != null;
    }

    @Override
    public void onClientConnected(final ClientSession session)
    {
        live.put(session.slot(), session);
        if (writer != null)
        {
            writer.onClientConnected(session);
        }
    }

    @Override
    public void onRegionAdded(final ClientSession session, final Region region)
    {
        if (writer != null)
        {
            writer.onRegionAdded(session, region);
        }
    }

    @Override
    public void onRegionRemoved(final ClientSession session, final Region region)
    {
        if (writer != null)
        {
            writer.onRegionRemoved(session, region);
        }
    }

    @Override
    public void onRegionsChanged(final ClientSession session)
    {
        if (writer != null)
        {
            writer.onRegionsChanged(session);
        }
    }

    @Override
    public void onClientDisconnected(final ClientSession session)
    {
        live.remove(session.slot());
        if (writer != null)
        {
            writer.onClientDisconnected(session);
        }
    }

    @Override
    public void onHousekeeping(final long nowMs)
    {
        if (writer == null && opened != null)
        {
            writer = opened;
            for (final ClientSession session : live.values())
            {
                writer.onClientConnected(session);
                writer.onRegionsChanged(session);
            }
        }
    }

    /**
     * Wait for the opening thread (a registry half made is finished, then closed) and close the registry.
     */
    @Override
    public void close()
    {
        try
        {
            if (opener.getState() != Thread.State.NEW)
            {
                opener.join(CLOSE_WAIT_MS);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        final StatusMapWriter toClose = opened;
        if (toClose != null)
        {
            toClose.close();
        }
    }
}
