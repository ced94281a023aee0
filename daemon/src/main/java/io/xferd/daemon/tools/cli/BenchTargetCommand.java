package io.xferd.daemon.tools.cli;

import io.xferd.client.ClientContext;
import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.client.XferException;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.tools.bench.BenchPattern;
import io.xferd.daemon.tools.bench.Units;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code xferd bench-target}: the passive side of {@code xferd bench}. A client that registers one buffer, prints
 * {@code TARGET <full segment name> <address> <size>} and holds the buffer until it is killed, its standard input
 * closes (unless {@code --ignore-stdin}) or the daemon goes away.
 */
@Command(name = "bench-target", mixinStandardHelpOptions = true,
    description = "Register a buffer for xferd bench to read and write; prints TARGET <segment> <address> <size>.")
public final class BenchTargetCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--dir", description = "Daemon directory (default: ${DEFAULT-VALUE}).")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    @Option(names = "--name", description = "Segment name (default: bench-target-<pid>).")
    String name = "bench-target-" + ProcessHandle.current().pid();

    @Option(names = "--size", converter = Units.ByteSize.class, defaultValue = "256MiB",
        description = "Buffer size, e.g. 512MiB (default: ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--pattern", paramLabel = "SEED",
        description = "Fill the buffer with the bench's pattern of this seed (for bench --operation read --verify).")
    Long patternSeed;

    @Option(names = "--file", description = "Register the first --size bytes of this existing file (or block " +
        "device) as the target, a storage region, instead of memory.")
    java.nio.file.Path file;

    @Option(names = "--sync", description = "With --file: fdatasync before each WRITE completes.")
    boolean sync;

    @Option(names = "--ignore-stdin",
        description = "Do not exit when standard input closes (for shell scripts that start it in the background).")
    boolean ignoreStdin;

    @Override
    public Integer call()
    {
        try (XferClient client = XferClient.connect(new ClientContext().directory(directory).segmentName(name)))
        {
            if (file != null)
            {
                final long address = client.registerFile(file, 0, size,
                    sync ? io.xferd.ipc.ControlMessages.REGISTER_FILE_SYNC : 0);
                System.out.println("TARGET " + client.segmentName() + " " + address + " " + size);
                System.out.flush();
                return serve(client);
            }
            final SharedBuffer buffer = client.allocateMemory(size);
            if (patternSeed != null)
            {
                BenchPattern.fill(buffer.segment(), patternSeed, 0);
            }
            else
            {
                buffer.segment().fill((byte)0);
            }
            client.registerMemory(buffer, "cpu:0");
            System.out.println("TARGET " + client.segmentName() + " " + buffer.address() + " " + buffer.length());
            System.out.flush();
            return serve(client);
        }
        catch (final XferException | IllegalArgumentException ex)
        {
            System.err.println("bench-target: " + ex.getMessage());
            return 3;
        }
    }

    private int serve(final XferClient client)
    {
        {
            final AtomicBoolean stdinClosed = new AtomicBoolean();
            if (!ignoreStdin)
            {
                Thread.ofPlatform().daemon().name("bench-target-stdin").start(() -> awaitEndOfInput(stdinClosed));
            }
            while (!stdinClosed.get())
            {
                client.getNotifies(); // also notices a daemon that went away
                if (client.isDaemonGone())
                {
                    System.out.println("bench-target: the daemon went away");
                    return 1;
                }
                LockSupport.parkNanos(50_000_000L);
            }
            return 0;
        }
    }

    private static void awaitEndOfInput(final AtomicBoolean closed)
    {
        final InputStream in = System.in;
        final byte[] discard = new byte[256];
        try
        {
            while (in.read(discard) >= 0)
            {
                // lines are ignored; only the end counts
            }
        }
        catch (final IOException ignore)
        {
            // treat as closed
        }
        closed.set(true);
    }
}
