package io.xferd.ipc;

import static io.xferd.ipc.ControlMessages.*;

/**
 * The body of a {@link ControlMessages#REGISTER_FILE} request: a byte range of a file or block device the client
 * opened and passes with SCM_RIGHTS, registered as a region of its segment at {@code ownerAddress}. Requests name
 * the range by that address as they name memory; clients take file addresses from {@link #FILE_ADDRESS_BASE} up,
 * where no user-space memory can lie on x86-64 or aarch64, so that a file never overlaps memory they register.
 * <pre>
 * 0 long correlation id   8 long owner address   16 long length   24 long offset in the file
 * 32 int flags            36 int reserved (0)
 * </pre>
 * Control plane only.
 */
public record FileRegistration(long correlationId, long ownerAddress, long length, long fileOffset, int flags)
{
    /** Where clients start numbering file regions: above every canonical user-space address. */
    public static final long FILE_ADDRESS_BASE = 1L << 62;

    public static int frameLength()
    {
        return ControlFrame.HEADER_LENGTH + REGISTER_FILE_BODY_LENGTH;
    }

    public void encode(final ControlFrame frame)
    {
        frame.begin(REGISTER_FILE)
            .putLong(CORRELATION_ID, correlationId)
            .putLong(REGISTER_FILE_ADDRESS, ownerAddress)
            .putLong(REGISTER_FILE_LENGTH, length)
            .putLong(REGISTER_FILE_OFFSET, fileOffset)
            .putInt(REGISTER_FILE_FLAGS, flags)
            .putInt(REGISTER_FILE_RESERVED, 0);
    }

    /**
     * @throws MalformedFrameException when the frame's length is not the layout's.
     */
    public static FileRegistration decode(final ControlFrame frame)
    {
        if (frame.length() != frameLength())
        {
            throw new MalformedFrameException("REGISTER_FILE of " + frame.length() + " bytes, its layout says " +
                frameLength());
        }
        return new FileRegistration(frame.getLong(CORRELATION_ID), frame.getLong(REGISTER_FILE_ADDRESS),
            frame.getLong(REGISTER_FILE_LENGTH), frame.getLong(REGISTER_FILE_OFFSET), frame.getInt(REGISTER_FILE_FLAGS));
    }

    public boolean sync()
    {
        return (flags & REGISTER_FILE_SYNC) != 0;
    }

    public boolean buffered()
    {
        return (flags & REGISTER_FILE_BUFFERED) != 0;
    }
}
