package io.xferd.daemon;

import io.xferd.daemon.memory.DeviceMemory;
import io.xferd.nativebindings.Availability;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A GPU runtime for hosts without a GPU: "device memory" is host memory the test allocated, and its "IPC handle"
 * carries the memory's address and size in its first 16 bytes. The daemon cannot tell, so its GPU plumbing (registration,
 * region kinds, copy dispatch, handle refcounts, refusals) runs for real; only the CUDA calls are stood in for.
 * Two devices: 0 with PCI bus id 0000:1b:00.0, 1 with 0000:99:00.0. "Pinned" memory is plain host memory. Records
 * what the daemon asked; its copies can be made to fail, all of them or one.
 */
final class HostBackedDeviceMemory implements DeviceMemory
{
    static final String[] PCI_BUS_IDS = {"0000:1b:00.0", "0000:99:00.0"};

    final List<String> calls = new CopyOnWriteArrayList<>();
    final AtomicInteger copies = new AtomicInteger();
    final java.util.Map<Long, Long> sizes = new java.util.concurrent.ConcurrentHashMap<>();
    final java.util.Map<Long, Arena> pinned = new java.util.concurrent.ConcurrentHashMap<>();
    final AtomicInteger pinnedAllocations = new AtomicInteger();
    // counts copies down to a failure: at 1 the next copy fails, at 0 or less none does
    private final AtomicInteger copiesToFailure = new AtomicInteger();
    volatile boolean failCopies;
    // while set, every copy waits for it to open (bounded); and whether an allocation was closed while a copy was
    // under way
    volatile java.util.concurrent.CountDownLatch copyGate;
    private final AtomicInteger copying = new AtomicInteger();
    volatile boolean closedWhileCopying;
    volatile boolean failPinned;
    // while set, a started copy happens only when its thread awaits its copies (as a DMA may land any time until then):
    // a caller that reuses a buffer before awaiting, or never awaits, moves the wrong bytes or none
    volatile boolean deferCopies;
    final AtomicInteger startedCopies = new AtomicInteger();
    private final java.util.concurrent.ConcurrentLinkedQueue<long[]> deferred =
        new java.util.concurrent.ConcurrentLinkedQueue<>();

    /**
     * Make the {@code n}th copy from now fail (once).
     */
    boolean isCopying()
    {
        return copying.get() > 0;
    }

    void failCopyNumber(final int n)
    {
        copiesToFailure.set(n);
    }

    /**
     * @return the 64-byte "IPC handle" of test memory at {@code address}.
     */
    static byte[] handleOf(final MemorySegment memory)
    {
        return ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN).putLong(memory.address())
            .putLong(memory.byteSize()).array();
    }

    @Override
    public Availability availability()
    {
        return Availability.available("host-backed test GPU");
    }

    @Override
    public int deviceCount()
    {
        return PCI_BUS_IDS.length;
    }

    @Override
    public int deviceOf(final String pciBusId)
    {
        for (int i = 0; i < PCI_BUS_IDS.length; i++)
        {
            if (PCI_BUS_IDS[i].equalsIgnoreCase(pciBusId))
            {
                return i;
            }
        }
        return -1;
    }

    @Override
    public long open(final int device, final byte[] ipcHandle)
    {
        calls.add("open device " + device);
        final ByteBuffer handle = ByteBuffer.wrap(ipcHandle).order(ByteOrder.LITTLE_ENDIAN);
        sizes.put(handle.getLong(0), handle.getLong(8) == 0 ? -1 : handle.getLong(8));
        return handle.getLong(0);
    }

    @Override
    public void close(final int device, final long baseAddress)
    {
        calls.add("close device " + device + " 0x" + Long.toHexString(baseAddress));
        if (copying.get() > 0)
        {
            closedWhileCopying = true;
        }
    }

    @Override
    public long allocationSize(final int device, final long baseAddress)
    {
        return sizes.getOrDefault(baseAddress, -1L);
    }

    @Override
    @SuppressWarnings("restricted")
    public void copy(final int device, final long destination, final long source, final long length)
    {
        if (failCopies || copiesToFailure.getAndDecrement() == 1)
        {
            throw new IllegalStateException("cudaMemcpy failed: cudaErrorIllegalAddress (700) stood in by the test");
        }
        copies.incrementAndGet();
        copying.incrementAndGet();
        try
        {
            awaitGate();
            MemorySegment.copy(MemorySegment.ofAddress(source).reinterpret(length), 0,
                MemorySegment.ofAddress(destination).reinterpret(length), 0, length);
        }
        finally
        {
            copying.decrementAndGet();
        }
    }

    @Override
    public void startCopy(final int device, final long destination, final long source, final long length)
    {
        startedCopies.incrementAndGet();
        if (!deferCopies)
        {
            copy(device, destination, source, length);
            return;
        }
        deferred.add(new long[] {device, destination, source, length});
    }

    @Override
    public void awaitCopies(final int device)
    {
        long[] started;
        while ((started = deferred.poll()) != null)
        {
            copy((int)started[0], started[1], started[2], started[3]);
        }
    }

    private void awaitGate()
    {
        final java.util.concurrent.CountDownLatch gate = copyGate;
        try
        {
            if (gate != null && !gate.await(SystemTests.WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
            {
                throw new IllegalStateException("the test never opened the copy gate");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at the copy gate", ex);
        }
    }

    @Override
    public MemorySegment allocatePinned(final long size)
    {
        if (failPinned)
        {
            throw new IllegalStateException("cudaMallocHost failed: cudaErrorMemoryAllocation (2) stood in by the test");
        }
        final Arena arena = Arena.ofShared();
        final MemorySegment memory = arena.allocate(size, 4096);
        pinned.put(memory.address(), arena);
        pinnedAllocations.incrementAndGet();
        return memory;
    }

    @Override
    public void freePinned(final MemorySegment memory)
    {
        pinned.remove(memory.address()).close();
    }
}
