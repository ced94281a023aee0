package io.xferd.ipc;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static io.xferd.ipc.ControlMessages.*;

/**
 * The body of a {@link ControlMessages#REGISTER_GPU_MEMORY} request: a range of the client's device memory, named by
 * the client's own device pointer, and the CUDA IPC handle through which the daemon opens the allocation holding it.
 * <p>
 * {@code allocationOffset} is where the pointer lies inside that allocation, so a range inside a bigger allocation (a
 * caching allocator's block) can be registered: the daemon's view starts at the opened base plus the offset. The PCI
 * bus id names the device independently of either process's {@code CUDA_VISIBLE_DEVICES}; when absent (empty) the
 * daemon takes the ordinal of the location ("cuda:N").
 * Control plane only: decoding allocates.
 */
public record GpuMemoryRegistration(
    long correlationId,
    long devicePointer,
    long length,
    long allocationOffset,
    byte[] ipcHandle,
    String pciBusId,
    String location)
{
    public GpuMemoryRegistration
    {
        if (ipcHandle.length != REGISTER_GPU_IPC_HANDLE_LENGTH)
        {
            throw new IllegalArgumentException("a CUDA IPC handle is " + REGISTER_GPU_IPC_HANDLE_LENGTH +
                " bytes, not " + ipcHandle.length);
        }
        if (pciBusId.getBytes(StandardCharsets.US_ASCII).length > REGISTER_GPU_PCI_BUS_ID_LENGTH)
        {
            throw new IllegalArgumentException("PCI bus id longer than " + REGISTER_GPU_PCI_BUS_ID_LENGTH + ": " +
                pciBusId);
        }
    }

    /**
     * @return the frame's length for a location of {@code locationLength} UTF-8 bytes: nothing may follow it.
     */
    public static int frameLength(final int locationLength)
    {
        return ControlFrame.HEADER_LENGTH + REGISTER_GPU_LOCATION + 4 + locationLength;
    }

    public void encode(final ControlFrame frame)
    {
        final byte[] pci = Arrays.copyOf(pciBusId.getBytes(StandardCharsets.US_ASCII), REGISTER_GPU_PCI_BUS_ID_LENGTH);
        frame.begin(REGISTER_GPU_MEMORY)
            .putLong(CORRELATION_ID, correlationId)
            .putLong(REGISTER_GPU_POINTER, devicePointer)
            .putLong(REGISTER_GPU_LENGTH, length)
            .putLong(REGISTER_GPU_ALLOCATION_OFFSET, allocationOffset)
            .putBytes(REGISTER_GPU_IPC_HANDLE, ipcHandle)
            .putBytes(REGISTER_GPU_PCI_BUS_ID, pci)
            .putString(REGISTER_GPU_LOCATION, location);
    }

    /**
     * @throws MalformedFrameException when the frame is shorter or longer than its layout says.
     */
    public static GpuMemoryRegistration decode(final ControlFrame frame)
    {
        final String location = frame.getString(REGISTER_GPU_LOCATION);
        final int expected = frameLength(location.getBytes(StandardCharsets.UTF_8).length);
        if (frame.length() != expected)
        {
            throw new MalformedFrameException("REGISTER_GPU_MEMORY of " + frame.length() + " bytes, its layout says " +
                expected);
        }
        final byte[] handle = new byte[REGISTER_GPU_IPC_HANDLE_LENGTH];
        frame.getBytes(REGISTER_GPU_IPC_HANDLE, handle);
        final byte[] pci = new byte[REGISTER_GPU_PCI_BUS_ID_LENGTH];
        frame.getBytes(REGISTER_GPU_PCI_BUS_ID, pci);
        int pciLength = 0;
        while (pciLength < pci.length && pci[pciLength] != 0)
        {
            pciLength++;
        }
        return new GpuMemoryRegistration(frame.getLong(CORRELATION_ID), frame.getLong(REGISTER_GPU_POINTER),
            frame.getLong(REGISTER_GPU_LENGTH), frame.getLong(REGISTER_GPU_ALLOCATION_OFFSET), handle,
            new String(pci, 0, pciLength, StandardCharsets.US_ASCII), location);
    }

    /**
     * @return the ordinal of a "cuda:N" location, or -1 when the location is not of that form.
     */
    public static int cudaOrdinal(final String location)
    {
        if (!location.startsWith("cuda:") || location.length() == 5 || location.length() > 9)
        {
            return -1;
        }
        int ordinal = 0;
        for (int i = 5; i < location.length(); i++)
        {
            final char c = location.charAt(i);
            if (c < '0' || c > '9')
            {
                return -1;
            }
            ordinal = ordinal * 10 + (c - '0');
        }
        return ordinal;
    }

    @Override
    public String toString()
    {
        return "GpuMemoryRegistration[0x" + Long.toHexString(devicePointer) + "+" + length + " at +" +
            allocationOffset + " of its allocation, " + location + (pciBusId.isEmpty() ? "" : " " + pciBusId) + "]";
    }
}
