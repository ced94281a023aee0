package io.xferd.perf;

import io.xferd.client.ClientContext;
import io.xferd.client.DaemonGoneException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.client.XferException;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The verifying workload of perf/chaos.sh: one client that, until its time is up, writes a fresh pattern to its own
 * range of a remote target, reads it back into a second buffer and compares every byte, and classifies each
 * request: verified (both OK and the bytes match), failed with a typed status (the status's name), hung (no
 * completion within the await timeout: must never happen), wrong (both reported OK but the bytes differ: must never
 * happen). A daemon that goes away, a target it cannot open, any other exception is counted by kind, and the
 * client reconnects. The counters are printed as one cumulative {@code CHAOS ...} line every second and at the end,
 * so a client killed with -9 loses at most a second of them.
 * <p>
 * {@code ChaosClient --dir DIR --target-file FILE --slot N --duration-s S [--stop-file FILE] [--block-size B]
 * [--await-ms MS]}: it ends after S seconds or once the stop file exists;
 * {@code FILE} holds the {@code TARGET name address size} line of xferd bench-target (re-read at every reconnect:
 * the script restarts the target); slot {@code N} picks this client's range of the target.
 */
public final class ChaosClient
{
    private final Path dir;
    private final Path targetFile;
    private final Path stopFile;
    private final int slot;
    private final long blockSize;
    private final long awaitMs;
    private final Map<String, Long> counts = new TreeMap<>();
    private final TransferRequest request = new TransferRequest();
    private long round;
    private long lastPrintNanos;

    private ChaosClient(final Path dir, final Path targetFile, final Path stopFile, final int slot,
        final long blockSize, final long awaitMs)
    {
        this.stopFile = stopFile;
        this.dir = dir;
        this.targetFile = targetFile;
        this.slot = slot;
        this.blockSize = blockSize;
        this.awaitMs = awaitMs;
        for (final String key : new String[] {"verified", "failed", "hung", "wrong"})
        {
            counts.put(key, 0L);
        }
    }

    public static void main(final String[] args)
    {
        Path dir = null;
        Path targetFile = null;
        Path stopFile = null;
        int slot = 0;
        long durationS = 20;
        long blockSize = 256 * 1024;
        long awaitMs = 30_000;
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--dir" -> dir = Path.of(args[i + 1]);
                case "--target-file" -> targetFile = Path.of(args[i + 1]);
                case "--stop-file" -> stopFile = Path.of(args[i + 1]);
                case "--slot" -> slot = Integer.parseInt(args[i + 1]);
                case "--duration-s" -> durationS = Long.parseLong(args[i + 1]);
                case "--block-size" -> blockSize = Long.parseLong(args[i + 1]);
                case "--await-ms" -> awaitMs = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (dir == null || targetFile == null)
        {
            throw new IllegalArgumentException("--dir and --target-file are required");
        }
        new ChaosClient(dir, targetFile, stopFile, slot, blockSize, awaitMs).run(durationS * 1_000_000_000L);
    }

    private void run(final long durationNanos)
    {
        final long deadline = System.nanoTime() + durationNanos;
        while (running(deadline))
        {
            try (XferClient client = XferClient.connect(new ClientContext().directory(dir)
                .segmentName("chaos-" + ProcessHandle.current().pid())))
            {
                final String[] target = Files.readString(targetFile).trim().split("\\s+");
                final long targetAddress = Long.parseLong(target[2]) + slot * blockSize;
                if ((slot + 1) * blockSize > Long.parseLong(target[3]))
                {
                    throw new IllegalArgumentException("slot " + slot + " lies beyond the target's " + target[3] +
                        " bytes");
                }
                final SharedBuffer written = client.allocateMemory(blockSize);
                final SharedBuffer readBack = client.allocateMemory(blockSize);
                client.registerMemory(written, "cpu:0");
                client.registerMemory(readBack, "cpu:0");
                final long segment = client.openSegment(target[1]);
                while (running(deadline))
                {
                    oneRound(client, segment, targetAddress, written, readBack);
                    printEverySecond();
                }
            }
            catch (final DaemonGoneException ex)
            {
                count("error:DAEMON_GONE");
                pause();
            }
            catch (final TargetChanged ex)
            {
                count("reopen:" + ex.getMessage());
            }
            catch (final IOException | RuntimeException ex)
            {
                count("error:" + ex.getClass().getSimpleName());
                pause();
            }
            printEverySecond();
        }
        print();
    }

    private boolean running(final long deadline)
    {
        return System.nanoTime() - deadline < 0 && (stopFile == null || !Files.exists(stopFile));
    }

    private void oneRound(final XferClient client, final long segment, final long targetAddress,
        final SharedBuffer written, final SharedBuffer readBack)
    {
        round++;
        final long seed = ProcessHandle.current().pid() * 1_000_003L + round;
        fill(written.segment(), seed);
        readBack.segment().fill((byte)0);
        final int writeStatus = transfer(client, Opcode.WRITE, written.address(), segment, targetAddress);
        if (writeStatus != TransferStatus.OK)
        {
            afterFailure(writeStatus);
            return;
        }
        final int readStatus = transfer(client, Opcode.READ, readBack.address(), segment, targetAddress);
        if (readStatus != TransferStatus.OK)
        {
            afterFailure(readStatus);
            return;
        }
        final long mismatch = readBack.segment().mismatch(written.segment());
        count(mismatch < 0 ? "verified" : "wrong");
        if (mismatch >= 0)
        {
            System.out.println("WRONG round " + round + ": byte " + mismatch + " differs, both requests were OK");
        }
    }

    /**
     * A target that was restarted has a new segment and a new buffer: open them again (the script rewrote the
     * target file). Any other failure: a short pause, so that a down link is not counted thousands of times.
     */
    private static void afterFailure(final int status)
    {
        pause();
        if (status == TransferStatus.UNKNOWN_SEGMENT || status == TransferStatus.TARGET_RANGE_NOT_REGISTERED ||
            status == TransferStatus.TARGET_GONE)
        {
            throw new TargetChanged(TransferStatus.name(status));
        }
    }

    private static final class TargetChanged extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        TargetChanged(final String status)
        {
            super(status, null, false, false);
        }
    }

    /**
     * @return the request's status; -1 when it hung (counted, and the client reconnects).
     */
    private int transfer(final XferClient client, final int opcode, final long local, final long segment,
        final long remote)
    {
        final long batch = client.allocateBatch(1);
        client.submitTransfer(batch, request.set(opcode, local, segment, remote, blockSize));
        try
        {
            client.awaitBatch(batch, awaitMs);
        }
        catch (final DaemonGoneException ex)
        {
            throw ex;
        }
        catch (final XferException ex)
        {
            count("hung");
            System.out.println("HUNG round " + round + ": " + ex.getMessage());
            throw ex;
        }
        final int status = client.taskState(batch, 0) == TaskStatus.COMPLETED ? TransferStatus.OK :
            client.getTransferStatus(batch, 0).status();
        client.freeBatch(batch);
        if (status != TransferStatus.OK)
        {
            count("failed");
            count((opcode == Opcode.WRITE ? "write:" : "read:") + TransferStatus.name(status));
        }
        return status;
    }

    private static void fill(final MemorySegment segment, final long seed)
    {
        long x = seed;
        for (long offset = 0; offset + 8 <= segment.byteSize(); offset += 8)
        {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, offset, x);
        }
    }

    private void count(final String key)
    {
        counts.merge(key, 1L, Long::sum);
    }

    private void printEverySecond()
    {
        final long now = System.nanoTime();
        if (now - lastPrintNanos > 1_000_000_000L)
        {
            lastPrintNanos = now;
            print();
        }
    }

    private void print()
    {
        final StringBuilder line = new StringBuilder("CHAOS");
        counts.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
        System.out.println(line);
        System.out.flush();
    }

    private static void pause()
    {
        try
        {
            Thread.sleep(200);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
