package io.xferd.client;

import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.GpuMemoryRegistration;
import io.xferd.ipc.ProcessMemoryRegistration;

/**
 * Registers this client's memory with the daemon, one kind per method, each one request answered by OK or a typed
 * {@link ControlException}: shared memory (a range of a {@link SharedBuffers} memfd, passed along), process memory
 * (reached with process_vm_readv/writev), GPU memory (a CUDA IPC handle); and unregisters any of them. A new kind of
 * memory is one more method here with its request's encoding; files (storage regions) go through
 * {@link FileRegistrar}. Callers hold the client's control lock.
 */
final class MemoryRegistrar
{
    private final DaemonProxy proxy;
    private final SharedBuffers sharedBuffers;
    private final FileRegistrar files = new FileRegistrar();

    MemoryRegistrar(final DaemonProxy proxy, final SharedBuffers sharedBuffers)
    {
        this.proxy = proxy;
        this.sharedBuffers = sharedBuffers;
    }

    /**
     * Register a range of shared memory, or, for a range outside it with a location "cuda:N", GPU memory whose
     * allocation starts at {@code address} (Mooncake's {@code registerLocalMemory(ptr, len, "cuda:0")}).
     *
     * @throws IllegalArgumentException when the range is neither, before anything is sent.
     */
    void registerMemory(final long address, final long length, final String location)
    {
        final SharedBuffer buffer = sharedBuffers.find(address, length);
        if (buffer == null)
        {
            if (GpuMemoryRegistration.cudaOrdinal(location) >= 0)
            {
                registerGpuMemory(address, length, location, address);
                return;
            }
            throw notShared(address, length);
        }
        final long correlationId = proxy.nextCorrelationId();
        proxy.begin(ControlMessages.REGISTER_MEMORY)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putLong(ControlMessages.REGISTER_ADDRESS, address)
            .putLong(ControlMessages.REGISTER_LENGTH, length)
            .putLong(ControlMessages.REGISTER_FD_OFFSET, address - buffer.address())
            .putString(ControlMessages.REGISTER_LOCATION, location);
        proxy.send(buffer.fd());
        proxy.awaitOk(correlationId);
    }

    void registerProcessMemory(final long address, final long length, final String location)
    {
        if (address <= 0 || length <= 0)
        {
            throw new IllegalArgumentException("bad range 0x" + Long.toHexString(address) + "+" + length);
        }
        final long correlationId = proxy.nextCorrelationId();
        new ProcessMemoryRegistration(correlationId, address, length, location)
            .encode(proxy.begin(ControlMessages.REGISTER_PROCESS_MEMORY));
        proxy.send(-1);
        proxy.awaitOk(correlationId);
    }

    void registerGpuMemory(
        final long devicePointer, final long length, final String location, final long allocationBase)
    {
        GpuMemoryExporter.check(devicePointer, length, location, allocationBase);
        final long correlationId = proxy.nextCorrelationId();
        GpuMemoryExporter.export(correlationId, devicePointer, length, location, allocationBase)
            .encode(proxy.begin(ControlMessages.REGISTER_GPU_MEMORY));
        proxy.send(-1);
        proxy.awaitOk(correlationId);
    }

    /**
     * Register a range of a file or block device (opened here, read-only when {@code readOnly}) as a storage region.
     *
     * @return the address that names the range's first byte.
     */
    long registerFile(
        final java.nio.file.Path path, final boolean readOnly, final long offset, final long length, final int flags)
    {
        final long correlationId = proxy.nextCorrelationId();
        final long address = files.send(proxy, correlationId, path, readOnly, offset, length, flags);
        proxy.awaitOk(correlationId);
        return address;
    }

    /**
     * Register a range of a file or block device this process already has open as {@code fd} (the daemon gets its
     * own descriptor; {@code fd} stays the caller's).
     *
     * @return the address that names the range's first byte.
     */
    long registerFile(final int fd, final long offset, final long length, final int flags)
    {
        final long correlationId = proxy.nextCorrelationId();
        final long address = files.send(proxy, correlationId, fd, offset, length, flags);
        proxy.awaitOk(correlationId);
        return address;
    }

    /**
     * Unregister the range of any kind that starts at {@code address}; the daemon answers once no transfer touches
     * it any more.
     */
    void unregisterMemory(final long address)
    {
        final long correlationId = proxy.nextCorrelationId();
        proxy.begin(ControlMessages.UNREGISTER_MEMORY)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putLong(ControlMessages.UNREGISTER_ADDRESS, address);
        proxy.send(-1);
        proxy.awaitOk(correlationId);
    }

    private static IllegalArgumentException notShared(final long address, final long length)
    {
        return new IllegalArgumentException("0x" + Long.toHexString(address) + "+" + length +
            " is not inside memory from allocateMemory(): the daemon can only map shared memory" +
            " (GPU memory: a location cuda:N; other memory of this process: registerProcessMemory)");
    }
}
