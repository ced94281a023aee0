package io.xferd.nativebindings.libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * Child side of {@link FdPassingAcrossProcessesTest}: connects to the socket in args[0], sends a memfd holding a known
 * pattern, waits for the parent's go-ahead and checks the answer the parent wrote through its own mapping.
 * Exit 0 on success.
 */
public final class FdPassingChild
{
    static final int SIZE = 4096;
    static final int PATTERN_LENGTH = 1024;
    static final int ANSWER_OFFSET = 2048;
    static final int ANSWER_LENGTH = 512;

    private FdPassingChild()
    {
    }

    static byte pattern(final int i)
    {
        return (byte)(i * 31 + 7);
    }

    static byte answer(final int i)
    {
        return (byte)(i ^ 0x5A);
    }

    public static void main(final String[] args)
    {
        ChildJvm.exitAfter(60);
        final int fd = Memfd.create("xferd-fd-passing-child");
        Memfd.truncate(fd, SIZE);
        final MemorySegment mapping = MappedMemory.mapShared(fd, 0, SIZE);
        for (int i = 0; i < PATTERN_LENGTH; i++)
        {
            mapping.set(ValueLayout.JAVA_BYTE, i, pattern(i));
        }
        int status = 0;
        try (UnixSocket socket = UnixSocket.connect(Path.of(args[0])); Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(16);
            buffer.set(ValueLayout.JAVA_BYTE, 0, (byte)'F');
            if (socket.sendWithFd(buffer, 0, 1, fd) != 1)
            {
                System.err.println("child: short sendmsg");
                status = 2;
            }
            else if (socket.receive(buffer, 0, 1) != 1 || buffer.get(ValueLayout.JAVA_BYTE, 0) != 'A')
            {
                System.err.println("child: no go-ahead from parent");
                status = 3;
            }
            else
            {
                for (int i = 0; i < ANSWER_LENGTH; i++)
                {
                    if (mapping.get(ValueLayout.JAVA_BYTE, ANSWER_OFFSET + i) != answer(i))
                    {
                        System.err.println("child: answer differs at " + i);
                        status = 4;
                        break;
                    }
                }
            }
        }
        MappedMemory.unmap(mapping);
        Memfd.close(fd);
        System.out.println("child: done, status " + status);
        System.exit(status);
    }
}
