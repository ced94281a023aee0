package io.xferd.client;

import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.nativebindings.libc.Memfd;

/**
 * The first exchange on a control connection: HELLO (protocol version, pid, flags, segment name) out, WELCOME with
 * the rings file's descriptor in. Anything else ends the connection attempt with a typed error.
 */
final class ClientHandshake
{
    private ClientHandshake()
    {
    }

    /**
     * @throws ControlException when the daemon refuses (name taken, daemon full, protocol version).
     * @throws XferException    when it answers with something other than WELCOME, or WELCOME without its rings file.
     */
    static Welcome perform(final DaemonProxy proxy, final int pid, final String segmentName, final boolean listen)
    {
        proxy.begin(ControlMessages.HELLO)
            .putInt(ControlMessages.HELLO_VERSION, ControlMessages.PROTOCOL_VERSION)
            .putInt(ControlMessages.HELLO_PID, pid)
            .putInt(ControlMessages.HELLO_FLAGS, listen ? ControlMessages.HELLO_FLAG_LISTEN : 0)
            .putInt(ControlMessages.HELLO_FLAGS + 4, 0)
            .putString(ControlMessages.HELLO_NAME, segmentName);
        proxy.send(-1);
        final ControlFrame welcome = proxy.awaitAnswer();
        if (welcome.type() == ControlMessages.ERROR)
        {
            throw new ControlException(welcome.getInt(ControlMessages.ERROR_CODE),
                welcome.getString(ControlMessages.ERROR_MESSAGE));
        }
        final int ringsFd = proxy.takeFd();
        if (welcome.type() != ControlMessages.WELCOME)
        {
            if (ringsFd >= 0)
            {
                Memfd.close(ringsFd);
            }
            throw new XferException("daemon answered HELLO with " + DaemonProxy.describe(welcome));
        }
        if (ringsFd < 0)
        {
            throw new XferException("daemon's WELCOME carried no rings file descriptor");
        }
        try
        {
            return Welcome.decode(welcome, ringsFd);
        }
        catch (final RuntimeException ex)
        {
            Memfd.close(ringsFd);
            throw ex;
        }
    }
}
