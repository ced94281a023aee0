package io.xferd.nativebindings.libc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Child side of {@link ProcessVmTest}: prints "READY pid address" for a native segment holding a known pattern,
 * then on "CHECK" verifies what the parent wrote with process_vm_writev and prints "OK" or "BAD".
 */
public final class VmTargetChild
{
    static final int SIZE = 4096;
    static final int ANSWER_OFFSET = 2048;
    static final int ANSWER_LENGTH = 256;

    private VmTargetChild()
    {
    }

    static byte pattern(final int i)
    {
        return (byte)(i * 13 + 1);
    }

    static byte answer(final int i)
    {
        return (byte)(0xA5 ^ i);
    }

    public static void main(final String[] args) throws IOException
    {
        ChildJvm.exitAfter(60);
        final MemorySegment segment = Arena.global().allocate(SIZE, 4096);
        for (int i = 0; i < SIZE; i++)
        {
            segment.set(ValueLayout.JAVA_BYTE, i, pattern(i));
        }
        System.out.println("READY " + Process.pid() + " " + segment.address());
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        final String line = in.readLine();
        if (!"CHECK".equals(line))
        {
            System.exit(0);
        }
        for (int i = 0; i < ANSWER_LENGTH; i++)
        {
            if (segment.get(ValueLayout.JAVA_BYTE, ANSWER_OFFSET + i) != answer(i))
            {
                System.out.println("BAD at " + i);
                System.out.flush();
                System.exit(1);
            }
        }
        System.out.println("OK");
        System.out.flush();
        System.exit(0);
    }
}
