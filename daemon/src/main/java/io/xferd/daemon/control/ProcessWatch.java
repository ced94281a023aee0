package io.xferd.daemon.control;

import io.xferd.daemon.session.ClientSession;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.Pidfd;
import io.xferd.nativebindings.libc.Poller;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Watches the processes whose ordinary memory clients registered, through a pidfd each: the daemon reaches that memory
 * by pid, and a pid is reused once its process is gone. A client's socket normally closes with its process, but a
 * child it forked may hold the socket on; the pidfd says when the process itself exits, so its session is cut off
 * before its pid can name another process. Conductor thread only; {@link #poll} allocates nothing.
 */
final class ProcessWatch implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ProcessWatch.class);

    private final List<ClientSession> sessions = new ArrayList<>();
    private final List<ClientSession> exited = new ArrayList<>();
    private final Poller poller;
    private int[] fds;
    private boolean unsupportedLogged;

    ProcessWatch(final int capacity)
    {
        this.poller = new Poller(capacity);
        this.fds = new int[capacity];
    }

    /**
     * Start watching the session's process (once per session).
     *
     * @return false when the process is already gone.
     */
    boolean watch(final ClientSession session)
    {
        if (sessions.contains(session))
        {
            return true;
        }
        final int fd;
        try
        {
            fd = Pidfd.open(session.pid());
        }
        catch (final NativeException ex)
        {
            if (ex.errno() == Errno.ESRCH)
            {
                return false;
            }
            if (!unsupportedLogged)
            {
                unsupportedLogged = true;
                LOG.warn("cannot watch client processes ({}): a client whose socket outlives its process keeps " +
                    "its process memory registered (logged once)", ex.getMessage());
            }
            return true;
        }
        if (sessions.size() == fds.length)
        {
            Pidfd.close(fd);
            return true; // as many as there are clients: cannot happen
        }
        fds[sessions.size()] = fd;
        sessions.add(session);
        return true;
    }

    void unwatch(final ClientSession session)
    {
        final int index = sessions.indexOf(session);
        if (index < 0)
        {
            return;
        }
        Pidfd.close(fds[index]);
        final int last = sessions.size() - 1;
        fds[index] = fds[last];
        sessions.set(index, sessions.get(last));
        sessions.remove(last);
    }

    /**
     * Look, without waiting, for watched processes that exited.
     *
     * @return the sessions whose process exited (valid until the next call); the caller cuts them off.
     */
    List<ClientSession> poll()
    {
        exited.clear();
        if (sessions.isEmpty())
        {
            return exited;
        }
        poller.clear();
        for (int i = 0, size = sessions.size(); i < size; i++)
        {
            poller.add(fds[i]);
        }
        if (poller.poll(0) > 0)
        {
            for (int i = 0, size = sessions.size(); i < size; i++)
            {
                if (poller.isReadable(i) || poller.isHangup(i))
                {
                    exited.add(sessions.get(i));
                }
            }
        }
        return exited;
    }

    int size()
    {
        return sessions.size();
    }

    /**
     * @return the pidfd of the {@code index}th watched process: readable once it exited (the conductor polls them
     * with its sockets, so an exit ends a quiet poll at once).
     */
    int fd(final int index)
    {
        return fds[index];
    }

    @Override
    public void close()
    {
        for (int i = 0; i < sessions.size(); i++)
        {
            Pidfd.close(fds[i]);
        }
        sessions.clear();
    }
}
