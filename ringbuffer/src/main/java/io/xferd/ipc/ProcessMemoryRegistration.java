package io.xferd.ipc;

import java.nio.charset.StandardCharsets;

import static io.xferd.ipc.ControlMessages.*;

/**
 * The body of a {@link ControlMessages#REGISTER_PROCESS_MEMORY} request: a range of the client's ordinary memory
 * (anonymous, heap, a numpy or torch CPU tensor) that the daemon reaches with {@code process_vm_readv/writev} on the
 * pid the socket's peer credentials name, never the pid the client claims. No file descriptor travels with it.
 * <pre>
 * 0 long correlation id   8 long owner address   16 long length   24 string location ("cpu:N" or "*")
 * </pre>
 * Control plane only: decoding allocates.
 */
public record ProcessMemoryRegistration(long correlationId, long ownerAddress, long length, String location)
{
    /**
     * @return the frame's length for a location of {@code locationLength} UTF-8 bytes: nothing may follow it.
     */
    public static int frameLength(final int locationLength)
    {
        return ControlFrame.HEADER_LENGTH + REGISTER_PROCESS_LOCATION + 4 + locationLength;
    }

    public void encode(final ControlFrame frame)
    {
        frame.begin(REGISTER_PROCESS_MEMORY)
            .putLong(CORRELATION_ID, correlationId)
            .putLong(REGISTER_PROCESS_ADDRESS, ownerAddress)
            .putLong(REGISTER_PROCESS_LENGTH, length)
            .putString(REGISTER_PROCESS_LOCATION, location);
    }

    /**
     * @throws MalformedFrameException when the frame is shorter or longer than its layout says.
     */
    public static ProcessMemoryRegistration decode(final ControlFrame frame)
    {
        final String location = frame.getString(REGISTER_PROCESS_LOCATION);
        final int expected = frameLength(location.getBytes(StandardCharsets.UTF_8).length);
        if (frame.length() != expected)
        {
            throw new MalformedFrameException("REGISTER_PROCESS_MEMORY of " + frame.length() +
                " bytes, its layout says " + expected);
        }
        return new ProcessMemoryRegistration(frame.getLong(CORRELATION_ID), frame.getLong(REGISTER_PROCESS_ADDRESS),
            frame.getLong(REGISTER_PROCESS_LENGTH), location);
    }

    @Override
    public String toString()
    {
        return "ProcessMemoryRegistration[0x" + Long.toHexString(ownerAddress) + "+" + length + " " + location + "]";
    }
}
