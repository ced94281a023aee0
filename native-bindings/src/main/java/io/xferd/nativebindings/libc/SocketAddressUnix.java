package io.xferd.nativebindings.libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Encodes {@code struct sockaddr_un}:
 * <pre>
 *   0             2                                      110
 *   +-------------+--------------------------------------+
 *   | sun_family  | sun_path[108]                        |
 *   | AF_UNIX (1) | path bytes, NUL   or   0, abstract name (no NUL)
 *   +-------------+--------------------------------------+
 * </pre>
 * A name starting with '@' is an abstract socket: the '@' becomes the leading NUL and the length passed to the
 * kernel covers exactly the name, as systemd and ss(8) write them.
 */
final class SocketAddressUnix
{
    static final short AF_UNIX = 1;
    static final long SIZE = 110;
    static final long PATH_OFFSET = 2;
    static final int PATH_CAPACITY = 108;

    private SocketAddressUnix()
    {
    }

    /**
     * @return a segment holding the address, sized to the socklen_t to pass.
     */
    static MemorySegment encode(final Arena arena, final String path)
    {
        final byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
        final boolean isAbstract = bytes.length > 0 && bytes[0] == '@';
        // A filesystem path needs its terminating NUL to fit; an abstract name uses all 108 bytes if it wants.
        final int pathLength = isAbstract ? bytes.length : bytes.length + 1;
        if (bytes.length == 0 || pathLength > PATH_CAPACITY)
        {
            throw new IllegalArgumentException(
                "unix socket path must be 1.." + (PATH_CAPACITY - 1) + " bytes: '" + path + "'");
        }
        final MemorySegment address = arena.allocate(PATH_OFFSET + pathLength, 2);
        address.set(ValueLayout.JAVA_SHORT, 0, AF_UNIX);
        MemorySegment.copy(bytes, 0, address, ValueLayout.JAVA_BYTE, PATH_OFFSET, bytes.length);
        if (isAbstract)
        {
            address.set(ValueLayout.JAVA_BYTE, PATH_OFFSET, (byte)0);
        }
        else
        {
            address.set(ValueLayout.JAVA_BYTE, PATH_OFFSET + bytes.length, (byte)0);
        }
        return address;
    }
}
