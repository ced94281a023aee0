package io.xferd.nativebindings.cuda;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static io.xferd.nativebindings.cuda.CudaLayouts.*;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * GPU check run by src/test/gpu/run-gpu-checks.sh, as two processes: {@code export HANDLE DONE} allocates 64 MiB
 * with cudaMalloc, fills it, writes its cudaIpcMemHandle to HANDLE and waits for DONE; {@code import HANDLE DONE}
 * opens the handle, copies GPU->GPU and to pinned host memory, verifies, measures H2D/D2H/D2D, writes a second
 * pattern into the exporter's memory and creates DONE; the exporter then verifies that pattern.
 */
public final class GpuCheckMain
{
    static final long SIZE = 64L << 20;
    static final int ROUNDS = 20;

    private GpuCheckMain() { }

    public static void main(final String[] args) throws Exception
    {
        System.out.println(args[0] + ": " + CudaRuntime.availability());
        if (!CudaRuntime.availability().isAvailable())
        {
            System.exit(2);
        }
        CudaRuntime.setDevice(0);
        System.out.println(args[0] + ": devices=" + CudaRuntime.deviceCount() + " gpu0=" + CudaRuntime.pciBusId(0));
        final MemorySegment pinned = CudaRuntime.mallocHost(SIZE);
        final long device = CudaRuntime.malloc(SIZE);
        final Path handleFile = Path.of(args[1]);
        final Path doneFile = Path.of(args[2]);
        if (args[0].equals("export"))
        {
            fill(pinned, 1);
            CudaRuntime.memcpy(device, pinned.address(), SIZE, MEMCPY_HOST_TO_DEVICE);
            check(CudaRuntime.pointerAttributes(device).isDevice(), "cudaPointerGetAttributes type is device");
            final Path tmp = handleFile.resolveSibling("handle.tmp");
            Files.writeString(tmp, CudaRuntime.ipcGetMemHandle(device).toHex());
            Files.move(tmp, handleFile, StandardCopyOption.ATOMIC_MOVE);
            await(doneFile);
            CudaRuntime.memcpy(pinned.address(), device, SIZE, MEMCPY_DEVICE_TO_HOST);
            check(verify(pinned, 2), "importer's writes seen by the exporter");
        }
        else
        {
            await(handleFile);
            final long remote = CudaRuntime.ipcOpenMemHandle(CudaIpcMemHandle.fromHex(Files.readString(handleFile)));
            CudaRuntime.memcpy(device, remote, SIZE, MEMCPY_DEVICE_TO_DEVICE);
            CudaRuntime.deviceSynchronize();
            CudaRuntime.memcpy(pinned.address(), device, SIZE, MEMCPY_DEVICE_TO_HOST);
            check(verify(pinned, 1), "exporter's pattern via IPC handle, D2D then D2H");
            final double d2d = bandwidth(device, remote, MEMCPY_DEVICE_TO_DEVICE);
            final double h2d = bandwidth(device, pinned.address(), MEMCPY_HOST_TO_DEVICE);
            final double d2h = bandwidth(pinned.address(), device, MEMCPY_DEVICE_TO_HOST);
            System.out.printf("import: 64 MiB cudaMemcpy H2D %.1f GB/s, D2H %.1f GB/s, D2D (IPC->local) %.1f GB/s%n",
                h2d, d2h, d2d);
            fill(pinned, 2);
            CudaRuntime.memcpy(remote, pinned.address(), SIZE, MEMCPY_HOST_TO_DEVICE);
            CudaRuntime.deviceSynchronize();
            CudaRuntime.ipcCloseMemHandle(remote);
            Files.writeString(doneFile, "done");
        }
        CudaRuntime.free(device);
        CudaRuntime.freeHost(pinned);
        System.out.println(args[0] + ": OK");
    }

    static double bandwidth(final long destination, final long source, final int kind)
    {
        CudaRuntime.memcpy(destination, source, SIZE, kind);
        CudaRuntime.deviceSynchronize();
        final long start = System.nanoTime();
        for (int i = 0; i < ROUNDS; i++)
        {
            CudaRuntime.memcpy(destination, source, SIZE, kind);
        }
        CudaRuntime.deviceSynchronize();
        return (double)SIZE * ROUNDS / (System.nanoTime() - start);
    }

    static void fill(final MemorySegment memory, final long seed)
    {
        for (long i = 0; i < SIZE / 8; i++)
        {
            memory.setAtIndex(JAVA_LONG, i, i * 0x9E3779B97F4A7C15L ^ seed);
        }
    }

    static boolean verify(final MemorySegment memory, final long seed)
    {
        for (long i = 0; i < SIZE / 8; i++)
        {
            if (memory.getAtIndex(JAVA_LONG, i) != (i * 0x9E3779B97F4A7C15L ^ seed))
            {
                System.out.println("mismatch at byte " + i * 8);
                return false;
            }
        }
        return true;
    }

    static void check(final boolean ok, final String what)
    {
        System.out.println((ok ? "PASS " : "FAIL ") + what);
        if (!ok)
        {
            System.exit(1);
        }
    }

    static void await(final Path file) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 240_000_000_000L;
        while (!Files.exists(file))
        {
            if (System.nanoTime() > deadline)
            {
                check(false, "waiting for " + file);
            }
            Thread.sleep(20);
        }
    }
}
