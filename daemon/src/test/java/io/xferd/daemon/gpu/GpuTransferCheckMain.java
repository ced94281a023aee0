package io.xferd.daemon.gpu;

import io.xferd.client.ClientContext;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.cuda.CudaLayouts;
import io.xferd.nativebindings.cuda.CudaRuntime;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The GPU-to-GPU check through a running daemon, run by daemon/src/test/gpu/run-gpu-transfer.sh as three commands:
 * <ul>
 * <li>{@code probe}: prints the CUDA runtime's availability; exit 0 when usable, 77 (skip) when not.</li>
 * <li>{@code target DIR WORK DEVICE}: cudaMalloc 256 MiB, fill it with pattern 2, register it with the daemon
 * serving DIR through its IPC handle, publish its device pointer in WORK/target, wait for WORK/done, then copy it back
 * to host and check that it holds pattern 1 (the initiator's WRITE).</li>
 * <li>{@code initiator DIR WORK DEVICE}: cudaMalloc 2 x 256 MiB, pattern 1 in the first half, register, READ the
 * target's 256 MiB into the second half and check it holds pattern 2, then WRITE the first half to the target
 * (timed, several rounds), print GB/s of both, and create WORK/done.</li>
 * </ul>
 * Exit 1 on any mismatch or failure.
 */
public final class GpuTransferCheckMain
{
    static final long SIZE = 256L << 20;
    static final long REQUEST = 16L << 20;
    static final int ROUNDS = 8;
    static final long TIMEOUT_MS = 120_000;

    private GpuTransferCheckMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Availability cuda = CudaRuntime.availability();
        System.out.println(args[0] + ": " + cuda);
        if (!cuda.isAvailable())
        {
            System.out.println("SKIP: no usable CUDA runtime in this process: " + cuda.reason());
            System.exit(77);
        }
        if (args[0].equals("probe"))
        {
            System.out.println("probe: " + CudaRuntime.deviceCount() + " CUDA device(s), cuda:0 at " +
                CudaRuntime.pciBusId(0));
            return;
        }
        final Path directory = Path.of(args[1]);
        final Path work = Path.of(args[2]);
        final int device = Integer.parseInt(args[3]);
        CudaRuntime.setDevice(device);
        final int status = args[0].equals("target") ? target(directory, work, device) :
            initiator(directory, work, device);
        System.exit(status);
    }

    private static int target(final Path directory, final Path work, final int device) throws Exception
    {
        final MemorySegment pinned = CudaRuntime.mallocHost(SIZE);
        final long memory = CudaRuntime.malloc(SIZE);
        try (XferClient client = XferClient.connect(context(directory, "gpu-target")))
        {
            fill(pinned, 2);
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

    private static int initiator(final Path directory, final Path work, final int device) throws Exception
    {
        final MemorySegment pinned = CudaRuntime.mallocHost(SIZE);
        final long memory = CudaRuntime.malloc(2 * SIZE);
        try (XferClient client = XferClient.connect(context(directory, "gpu-initiator")))
        {
            fill(pinned, 1);
            CudaRuntime.memcpy(memory, pinned.address(), SIZE, CudaLayouts.MEMCPY_HOST_TO_DEVICE);
            CudaRuntime.deviceSynchronize();
            client.registerGpuMemory(memory, 2 * SIZE, "cuda:" + device);
            await(work.resolve("target"));
            final long target = Long.parseUnsignedLong(Files.readString(work.resolve("target")).strip(), 16);
            final long segment = client.openSegment("gpu-target");

            final long readNanos = transfer(client, segment, false, memory + SIZE, target, 1);
            CudaRuntime.memcpy(pinned.address(), memory + SIZE, SIZE, CudaLayouts.MEMCPY_DEVICE_TO_HOST);
            if (!check(verify(pinned, 0, SIZE, 2), "initiator: READ GPU -> GPU brought the target's pattern"))
            {
                return 1;
            }
            final long writeNanos = transfer(client, segment, true, memory, target, ROUNDS);
            System.out.printf("initiator: GPU -> GPU through the daemon, %d MiB requests: READ %.1f GB/s (256 MiB " +
                "once), WRITE %.1f GB/s (256 MiB x %d)%n", REQUEST >> 20, (double)SIZE / readNanos,
                (double)SIZE * ROUNDS / writeNanos, ROUNDS);
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

    /**
     * @return nanoseconds for {@code rounds} x 256 MiB, in batches of 16 MiB requests.
     */
    private static long transfer(final XferClient client, final long segment, final boolean write,
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
                    System.out.println("initiator: request " + i + ": " + client.getTransferStatus(batch, i));
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

    static void fill(final MemorySegment memory, final long seed)
    {
        for (long i = 0; i < SIZE / 8; i++)
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
