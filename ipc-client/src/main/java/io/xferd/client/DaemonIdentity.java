package io.xferd.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who answers on {@code xferd.sock} must be the daemon: before a client sends anything (its pid, its segment name,
 * later its memfds), the uid of the process listening (SO_PEERCRED, from the kernel) must be the uid that owns the
 * daemon directory, or root. A member of the directory's group who replaced the socket with its own listener is
 * refused here instead of receiving the client's HELLO.
 */
final class DaemonIdentity
{
    static final int ROOT_UID = 0;

    private DaemonIdentity()
    {
    }

    /**
     * @throws XferException naming both uids when the listener is not the directory's owner (nor root).
     */
    static void verify(final Path socketPath, final int listenerUid)
    {
        final Path directory = socketPath.toAbsolutePath().getParent();
        final int ownerUid;
        try
        {
            ownerUid = (Integer)Files.getAttribute(directory, "unix:uid");
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            throw new XferException("cannot check who owns " + directory + ": " + ex.getMessage(), ex);
        }
        if (listenerUid != ownerUid && listenerUid != ROOT_UID)
        {
            throw new XferException("refusing " + socketPath + ": the process listening on it runs as uid " +
                listenerUid + " but " + directory + " belongs to uid " + ownerUid + "; someone other than the " +
                "daemon may have replaced the socket (nothing was sent)");
        }
    }
}
