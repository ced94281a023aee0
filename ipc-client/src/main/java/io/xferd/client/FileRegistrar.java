package io.xferd.client;

import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.FileRegistration;
import io.xferd.nativebindings.libc.FileIo;

import java.nio.file.Path;

/**
 * Registers byte ranges of files and block devices as storage regions of this client's segment: opens the file
 * with this process's own permissions (the daemon never opens a path a client names, so what this process may open
 * is what it may register), passes the descriptor with the REGISTER_FILE request, and names the range by an
 * address of its own from {@link FileRegistration#FILE_ADDRESS_BASE} up, where no memory can lie. Requests then
 * use that address as they use a memory address. Callers hold the client's control lock.
 */
final class FileRegistrar
{
    private static final long GUARD = 1L << 20;

    private long nextAddress = FileRegistration.FILE_ADDRESS_BASE;

    /**
     * Opens {@code path} (read-write, or read-only for READ-only use) and sends the request with its descriptor;
     * closes this process's copy once sent.
     *
     * @return the address the range will be known by once the daemon answers OK.
     */
    long send(
        final DaemonProxy proxy, final long correlationId, final Path path, final boolean readOnly, final long offset,
        final long length, final int flags)
    {
        final int fd = FileIo.open(path.toString(), readOnly ? FileIo.O_RDONLY : FileIo.O_RDWR, 0);
        try
        {
            return send(proxy, correlationId, fd, offset, length, flags);
        }
        finally
        {
            FileIo.close(fd);
        }
    }

    /**
     * Sends the request with {@code fd} (the daemon gets its own descriptor of the same open file; this one stays
     * the caller's).
     */
    long send(
        final DaemonProxy proxy, final long correlationId, final int fd, final long offset, final long length,
        final int flags)
    {
        if (offset < 0 || length <= 0 || offset + length < offset)
        {
            throw new IllegalArgumentException("bad file range: offset " + offset + " length " + length);
        }
        final long address = nextAddress;
        new FileRegistration(correlationId, address, length, offset, flags)
            .encode(proxy.begin(ControlMessages.REGISTER_FILE));
        proxy.send(fd);
        nextAddress = address + ((length + GUARD - 1) & -GUARD) + GUARD;
        return address;
    }
}
