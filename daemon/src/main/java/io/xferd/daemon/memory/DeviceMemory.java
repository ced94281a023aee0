package io.xferd.daemon.memory;

import io.xferd.nativebindings.Availability;

import java.lang.foreign.MemorySegment;

/**
 * What the daemon needs from a GPU runtime to serve GPU memory: whether there is one, which device a client means,
 * opening and closing a client's allocation from its IPC handle, copying to, from or between device memory, and the
 * pinned host memory through which GPU memory goes to and from sockets.
 * {@link CudaDeviceMemory} is the CUDA runtime; tests put host memory behind it to check the daemon's plumbing on
 * hosts without a GPU. Calls may fail with any runtime exception, which the caller turns into a typed answer.
 */
public interface DeviceMemory
{
    /**
     * @return whether GPU memory can be served, with the reason when not. The first call may load the runtime.
     */
    Availability availability();

    int deviceCount();

    /**
     * @param pciBusId e.g. {@code "0000:1b:00.0"}, case-insensitive.
     * @return the daemon's ordinal of that device, or -1 when it has none with that PCI bus id.
     */
    int deviceOf(String pciBusId);

    /**
     * Open another process's allocation.
     *
     * @return the allocation's base address in this process.
     */
    long open(int device, byte[] ipcHandle);

    void close(int device, long baseAddress);

    /**
     * @return the size of the opened allocation at {@code baseAddress}, or -1 when the runtime cannot say.
     */
    long allocationSize(int device, long baseAddress);

    /**
     * Copy {@code length} bytes and wait until they landed; either address may be host memory of this process or
     * device memory (unified addressing). Called on transfer worker threads.
     *
     * @param device the device whose context issues the copy.
     */
    void copy(int device, long destination, long source, long length);

    /**
     * Start a {@link #copy} and return, where the runtime can, before the bytes have moved (between pinned host
     * memory and the device: a DMA the calling thread overlaps with other work); {@link #awaitCopies} waits for
     * every copy the calling thread started on {@code device}. Until then the source must not be written nor the
     * destination read. By default the copy is done before this returns.
     */
    default void startCopy(final int device, final long destination, final long source, final long length)
    {
        copy(device, destination, source, length);
    }

    /**
     * Wait until every copy the calling thread {@linkplain #startCopy started} on {@code device} has landed.
     */
    default void awaitCopies(final int device)
    {
    }

    /**
     * Page-locked host memory, which device copies reach by DMA: sockets read and write it, the device copies to
     * and from it. Usable with every device (unified addressing). Release with {@link #freePinned(MemorySegment)}.
     *
     * @return {@code size} bytes.
     */
    MemorySegment allocatePinned(long size);

    void freePinned(MemorySegment pinned);
}
