package io.xferd.daemon.tools.bench;

import io.xferd.client.ClientContext;
import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The bench's side of the setup: its clients (one per thread, segment {@code bench-<pid>-<i>}), their
 * registered buffers, and the target they all open; closes every client at the end.
 */
public final class BenchClients implements AutoCloseable
{
    private final Path directory;
    private final String targetName;
    private final long targetAddress;
    private final long targetSize;
    private final List<XferClient> clients = new ArrayList<>();
    private final Supplier<IdleStrategy> idle;

    /**
     * @param name {@code doorbell} (the client library's default: spin, yield, then sleep on the completion ring's
     *             doorbell), {@code spin} (the default before the doorbell: spin, yield, park 1 to 50 us) or
     *             {@code gentle} (parks up to 500 us: on a host with two cores and both "hosts" on it, a client
     *             spinning for completions takes the CPU the daemons move bytes with).
     */
    public static Supplier<IdleStrategy> idleStrategy(final String name)
    {
        return switch (name)
        {
            case "doorbell" -> ClientContext::defaultIdleStrategy;
            case "spin" -> ClientContext::parkingIdleStrategy;
            case "gentle" -> () -> new BackoffIdleStrategy(10, 5, 10_000, 500_000);
            default -> throw new IllegalArgumentException("client idle must be doorbell, spin or gentle: " + name);
        };
    }

    public BenchClients(final Path directory, final String targetName, final long targetAddress, final long targetSize)
    {
        this(directory, targetName, targetAddress, targetSize, ClientContext::defaultIdleStrategy);
    }

    /**
     * @param idle makes each client's idle strategy (they are not shared: each keeps its own back-off state).
     */
    public BenchClients(final Path directory, final String targetName, final long targetAddress, final long targetSize,
        final Supplier<IdleStrategy> idle)
    {
        this.idle = idle;
        this.directory = directory;
        this.targetName = targetName;
        this.targetAddress = targetAddress;
        this.targetSize = targetSize;
    }

    public XferClient connect(final int index)
    {
        final XferClient client = XferClient.connect(new ClientContext().directory(directory).idleStrategy(idle.get())
            .segmentName("bench-" + ProcessHandle.current().pid() + "-" + index));
        clients.add(client);
        return client;
    }

    /**
     * Allocate, touch and register {@code length} bytes of shared memory.
     */
    public SharedBuffer allocate(final XferClient client, final long length)
    {
        final SharedBuffer buffer = client.allocateMemory(length);
        buffer.segment().fill((byte)0);
        client.registerMemory(buffer, "cpu:0");
        return buffer;
    }

    /**
     * @throws BenchSetupException saying why the target's segment could not be opened.
     */
    public long openTarget(final XferClient client)
    {
        try
        {
            return client.openSegment(targetName);
        }
        catch (final ControlException ex)
        {
            throw new BenchSetupException("cannot open the target segment " + targetName + ": " + ex.getMessage() +
                (isLocal(client) ? "" : " (a segment on another host's daemon needs the daemon-to-daemon transport)"),
                ex);
        }
    }

    private boolean isLocal(final XferClient client)
    {
        final String own = client.segmentName();
        final int slash = targetName.indexOf('/');
        return slash < 0 || own.startsWith(targetName.substring(0, slash + 1));
    }

    String targetName()
    {
        return targetName;
    }

    long targetAddress()
    {
        return targetAddress;
    }

    long targetSize()
    {
        return targetSize;
    }

    @Override
    public void close()
    {
        for (final XferClient client : clients)
        {
            client.close();
        }
        clients.clear();
    }

    /**
     * The bench could not start: no daemon, unknown target, ... (exit code 3).
     */
    public static final class BenchSetupException extends RuntimeException
    {
        public BenchSetupException(final String message, final Throwable cause)
        {
            super(message, cause);
        }
    }
}
