package io.xferd.daemon.gpu;

import io.xferd.client.ClientContext;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaLayouts;
import io.xferd.nativebindings.cuda.CudaRuntime;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The GPU-to-GPU checks through running daemons, run by daemon/src/test/gpu/run-gpu-transfer.sh as these commands
 * (parsed by {@link #parse}, before anything touches CUDA; bad arguments exit 2):
 * <ul>
 * <li>{@code probe}: prints the CUDA runtime's availability; exit 0 when usable, 77 (skip) when not.</li>
 * <li>{@code free-ports N}: prints N distinct TCP ports free on 127.0.0.1 just now (for the daemons'
 * {@code --rpc-address}); needs no CUDA.</li>
 * <li>{@code target DIR WORK DEVICE}: cudaMalloc 256 MiB, fill it with pattern 2, register it as segment
 * {@code gpu-target} with the daemon serving DIR through its IPC handle, publish its device pointer in WORK/target,
 * wait for WORK/done, then copy it back to host and check that it holds pattern 1 (the initiator's WRITE).</li>
 * <li>{@code initiator DIR WORK DEVICE}: cudaMalloc 2 x 256 MiB, pattern 1 in the first half, register with the
 * daemon serving DIR, open {@code gpu-target} (the same daemon), READ the target's 256 MiB into the second half and
 * check it holds pattern 2, then WRITE the first half to the target (timed, {@value #ROUNDS} rounds), print GB/s of
 * both, and create WORK/done.</li>
 * <li>{@code remote-initiator DIR WORK DEVICE HOST:PORT}: the same, but the target is registered with another
 * daemon, whose RPC address is HOST:PORT: it opens {@code HOST:PORT/gpu-target}, so every byte crosses TCP between
 * the two daemons, staged through pinned host memory on both ({@value #REMOTE_ROUNDS} WRITE rounds).</li>
 * </ul>
 * Exit 1 on any mismatch or failure.
 */
public final class GpuTransferCheckMain
{
    static final long SIZE = 256L << 20;
    static final long REQUEST = 16L << 20;
    static final int ROUNDS = 8;
    static final int REMOTE_ROUNDS = 4;
    static final String TARGET_SEGMENT = "gpu-target";
    static final String USAGE = "usage: GpuTransferCheckMain probe | free-ports N | target DIR WORK DEVICE | " +
        "initiator DIR WORK DEVICE | remote-initiator DIR WORK DEVICE HOST:PORT";
    static final long TIMEOUT_MS = 120_000;

    private GpuTransferCheckMain()
    {
    }

    /**
     * One command line, checked.
     *
     * @param role      probe, free-ports, target, initiator or remote-initiator.
     * @param count     free-ports: how many; otherwise 0.
     * @param directory the daemon's directory (target and initiators), else null.
     * @param work      where target and initiator meet (files target and done), else null.
     * @param device    the CUDA device ordinal to allocate on, else -1.
     * @param segment   initiators: the segment to open ({@code gpu-target} or {@code HOST:PORT/gpu-target}), target:
     *                  the name it registers as; else null.
     * @param rounds    initiators: how many times the 256 MiB are written; else 0.
     */
    record Arguments(String role, int count, Path directory, Path work, int device, String segment, int rounds)
    {
        boolean remote()
        {
            return segment != null && segment.contains("/");
        }
    }

    static Arguments parse(final String... args)
    {
        if (args.length == 0)
        {
            throw new IllegalArgumentException("no command");
        }
        final String role = args[0];
        switch (role)
        {
            case "probe" ->
            {
                arity(args, 1);
                return new Arguments(role, 0, null, null, -1, null, 0);
            }
            case "free-ports" ->
            {
                arity(args, 2);
                final int count = number(args[1], "N", 1, 16);
                return new Arguments(role, count, null, null, -1, null, 0);
            }
            case "target", "initiator" ->
            {
                arity(args, 4);
                return new Arguments(role, 0, Path.of(args[1]), Path.of(args[2]), number(args[3], "DEVICE", 0, 1023),
                    TARGET_SEGMENT, role.equals("target") ? 0 : ROUNDS);
            }
            case "remote-initiator" ->
            {
                arity(args, 5);
                return new Arguments(role, 0, Path.of(args[1]), Path.of(args[2]), number(args[3], "DEVICE", 0, 1023),
                    hostAndPort(args[4]) + "/" + TARGET_SEGMENT, REMOTE_ROUNDS);
            }
            default -> throw new IllegalArgumentException("unknown command " + role);
        }
    }

    private static void arity(final String[] args, final int expected)
    {
        if (args.length != expected)
        {
            throw new IllegalArgumentException(args[0] + " takes " + (expected - 1) + " argument(s), got " +
                (args.length - 1));
        }
    }

    private static int number(final String text, final String what, final int min, final int max)
    {
        final int value;
        try
        {
            value = Integer.parseInt(text);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(what + " is not a number: " + text);
        }
        if (value < min || value > max)
        {
            throw new IllegalArgumentException(what + " out of range " + min + ".." + max + ": " + text);
        }
        return value;
    }

    /**
     * @return {@code text} when it is {@code host:port} with a port in 1..65535 (the daemon's own RPC address form).
     */
    static String hostAndPort(final String text)
    {
        final int colon = text.lastIndexOf(':');
        if (colon <= 0 || text.contains("/") || text.chars().anyMatch(Character::isWhitespace))
        {
            throw new IllegalArgumentException("HOST:PORT expected, got " + text);
        }
        number(text.substring(colon + 1), "PORT", 1, 65535);
        return text;
    }

    /**
     * @return {@code count} distinct TCP ports that were free on 127.0.0.1 (all bound at once, then released).
     */
    static int[] freePorts(final int count) throws IOException
    {
        final List<ServerSocket> sockets = new ArrayList<>();
        try
        {
            final int[] ports = new int[count];
            for (int i = 0; i < count; i++)
            {
                final ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        }
        finally
        {
            for (final ServerSocket socket : sockets)
            {
                socket.close();
            }
        }
    }

    public static void main(final String[] args) throws Exception
    {
        final Arguments arguments;
        try
        {
            arguments = parse(args);
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println(ex.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (arguments.role().equals("free-ports"))
        {
            final StringBuilder line = new StringBuilder();
            for (final int port : freePorts(arguments.count()))
            {
                line.append(line.isEmpty() ? "" : " ").append(port);
            }
            System.out.println(line);
            return;
        }
        final Availability cuda = CudaRuntime.availability();
        System.out.println(arguments.role() + ": " + cuda);
        if (!cuda.isAvailable())
        {
            System.out.println("SKIP: no usable CUDA runtime in this process: " + cuda.reason());
            System.exit(77);
        }
        if (arguments.role().equals("probe"))
        {
            System.out.println("probe: " + CudaRuntime.deviceCount() + " CUDA device(s), cuda:0 at " +
                CudaRuntime.pciBusId(0));
            return;
        }
        CudaRuntime.setDevice(arguments.device());
        final int status = arguments.role().equals("target") ? target(arguments) : initiator(arguments);
        System.exit(status);
    }

    private static int target(final Arguments arguments) throws Exception
    {
        final Path work = arguments.work();
        final int device = arguments.device();
        final MemorySegment pinned = CudaRuntime.mallocHost(SIZE);
        final long memory = CudaRuntime.malloc(SIZE);
        try (XferClient client = XferClient.connect(context(arguments.directory(), arguments.segment())))
        {
            fill(pinned, SIZE, 2);
            CudaRuntime.memcpy(memory, pinned.address(), SIZE, CudaLayouts.MEMCPY_HOST_TO_DEVICE);
            CudaRuntime.deviceSynchronize();
            client.registerMemory(memory, SIZE, "cuda:" + device);
            System.out.printf("target: registered 256 MiB of cuda:%d at 0x%x (%s) through its IPC handle%n", device,
                memory, CudaRuntime.pciBusId(device));
            publish(work.resolve("target"), Long.toHexString(memory));
            await(work.resolve("done"));
            CudaRuntime.memcpy(pinned.address(), memory, SIZE, CudaLayouts.MEMCPY_DEVICE_TO_HOST);
            final boolean ok = check(verify(pinned, 0, SIZE, 1), "target: the initiator's WRITE landed in GPU memory");
            client.unregisterMemory(memory);
            return ok ? 0 : 1;
        }
        finally
        {
            CudaRuntime.free(memory);
            CudaRuntime.freeHost(pinned);
        }
    }

    private static int initiator(final Arguments arguments) throws Exception
    {
        final String role = arguments.role();
        final Path work = arguments.work();
        final int device = arguments.device();
        final MemorySegment pinned = CudaRuntime.mallocHost(SIZE);
        final long memory = CudaRuntime.malloc(2 * SIZE);
        try (XferClient client = XferClient.connect(context(arguments.directory(), "gpu-initiator")))
        {
            fill(pinned, SIZE, 1);
            CudaRuntime.memcpy(memory, pinned.address(), SIZE, CudaLayouts.MEMCPY_HOST_TO_DEVICE);
            CudaRuntime.deviceSynchronize();
            client.registerGpuMemory(memory, 2 * SIZE, "cuda:" + device);
            await(work.resolve("target"));
            final long target = Long.parseUnsignedLong(Files.readString(work.resolve("target")).strip(), 16);
            final long segment = client.openSegment(arguments.segment());
            System.out.printf("%s: opened %s, target memory at 0x%x%n", role, arguments.segment(), target);

            final long readNanos = transfer(role, client, segment, false, memory + SIZE, target, 1);
            CudaRuntime.memcpy(pinned.address(), memory + SIZE, SIZE, CudaLayouts.MEMCPY_DEVICE_TO_HOST);
            if (!check(verify(pinned, 0, SIZE, 2), role + ": READ GPU -> GPU " + path(arguments) +
                " brought the target's pattern"))
            {
                return 1;
            }
            final int rounds = arguments.rounds();
            final long writeNanos = transfer(role, client, segment, true, memory, target, rounds);
            System.out.printf("%s: GPU -> GPU %s, %d MiB requests: READ %.1f GB/s (256 MiB once), WRITE %.1f " +
                "GB/s (256 MiB x %d)%n", role, path(arguments), REQUEST >> 20, (double)SIZE / readNanos,
                (double)SIZE * rounds / writeNanos, rounds);
            client.unregisterMemory(memory);
            publish(work.resolve("done"), "done");
            return 0;
        }
        finally
        {
            CudaRuntime.free(memory);
            CudaRuntime.freeHost(pinned);
        }
    }

    static String path(final Arguments arguments)
    {
        return arguments.remote() ? "between two daemons over TCP (staged through pinned host memory)" :
            "through one daemon";
    }

    /**
     * @return nanoseconds for {@code rounds} x 256 MiB, in batches of 16 MiB requests.
     */
    private static long transfer(final String role, final XferClient client, final long segment, final boolean write,
        final long local, final long target, final int rounds)
    {
        final int requests = (int)(SIZE / REQUEST);
        final long start = System.nanoTime();
        for (int round = 0; round < rounds; round++)
        {
            final long batch = client.allocateBatch(requests);
            for (int i = 0; i < requests; i++)
            {
                final long offset = i * REQUEST;
                client.submitTransfer(batch, write ? TransferRequest.write(local + offset, segment, target + offset,
                    REQUEST) : TransferRequest.read(local + offset, segment, target + offset, REQUEST));
            }
            if (!client.awaitBatch(batch, TIMEOUT_MS))
            {
                for (int i = 0; i < requests; i++)
                {
                    System.out.println(role + ": request " + i + ": " + client.getTransferStatus(batch, i));
                }
                throw new IllegalStateException((write ? "WRITE" : "READ") + " failed");
            }
            client.freeBatch(batch);
        }
        return System.nanoTime() - start;
    }

    private static ClientContext context(final Path directory, final String name)
    {
        return new ClientContext().directory(directory).segmentName(name).controlTimeoutMs(30_000);
    }

    static void fill(final MemorySegment memory, final long length, final long seed)
    {
        for (long i = 0; i < length / 8; i++)
        {
            memory.setAtIndex(JAVA_LONG, i, i * 0x9E3779B97F4A7C15L ^ seed);
        }
    }

    static boolean verify(final MemorySegment memory, final long from, final long length, final long seed)
    {
        for (long i = from / 8; i < (from + length) / 8; i++)
        {
            if (memory.getAtIndex(JAVA_LONG, i) != (i * 0x9E3779B97F4A7C15L ^ seed))
            {
                System.out.println("mismatch at byte " + i * 8);
                return false;
            }
        }
        return true;
    }

    static boolean check(final boolean ok, final String what)
    {
        System.out.println((ok ? "PASS " : "FAIL ") + what);
        return ok;
    }

    static void publish(final Path file, final String text) throws Exception
    {
        final Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }

    static void await(final Path file) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (!Files.exists(file))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("timed out waiting for " + file);
            }
            Thread.sleep(20);
        }
    }
}
