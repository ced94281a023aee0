package io.xferd.daemon;

import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.ProcessMemoryRegistration;
import io.xferd.nativebindings.libc.MappedMemory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A client process whose segment is ordinary anonymous memory (as a numpy array or a torch CPU tensor is): it
 * connects, fills SIZE bytes of private anonymous memory with the seed's data, registers them by address with
 * REGISTER_PROCESS_MEMORY (no fd), prints {@code READY <address>} (or {@code REFUSED <code> <message>}), then
 * answers lines from stdin until {@code EXIT} or end of input:
 * <ul>
 *   <li>{@code VERIFY n seed seedOffset offset length}: {@code CHECKED n ok} when its bytes [offset, offset + length)
 *   are the seed's data from seedOffset, else {@code CHECKED n mismatch at i};</li>
 *   <li>{@code UNMAP n offset length}: unmaps those pages, {@code UNMAPPED n}.</li>
 * </ul>
 * Arguments: DIR NAME SIZE SEED.
 */
public final class ProcessMemoryHolderMain
{
    private ProcessMemoryHolderMain()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final Path directory = Path.of(args[0]);
        final int size = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[3]);
        final MemorySegment memory = MappedMemory.mapAnonymous(size);
        SystemTests.fill(memory, seed);
        try (RawControlSession session = RawControlSession.hello(directory, args[1], Duration.ofSeconds(20)))
        {
            final ControlFrame answer = register(session, 1, memory.address(), size, "cpu:0");
            if (answer.type() != ControlMessages.OK)
            {
                say("REFUSED " + answer.getInt(ControlMessages.ERROR_CODE) + " " +
                    answer.getString(ControlMessages.ERROR_MESSAGE));
                return;
            }
            say("READY " + memory.address());
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.equals("EXIT"))
            {
                final String[] fields = line.split(" ");
                switch (fields[0])
                {
                    case "VERIFY" ->
                    {
                        final int length = Integer.parseInt(fields[5]);
                        final long mismatch = SystemTests.firstMismatch(memory, Long.parseLong(fields[4]),
                            SystemTests.randomBytes(Long.parseLong(fields[2]), Integer.parseInt(fields[3]) + length),
                            Integer.parseInt(fields[3]), length);
                        say("CHECKED " + fields[1] + (mismatch < 0 ? " ok" : " mismatch at " + mismatch));
                    }
                    case "UNMAP" ->
                    {
                        MappedMemory.unmap(memory.asSlice(Long.parseLong(fields[2]), Long.parseLong(fields[3])));
                        say("UNMAPPED " + fields[1]);
                    }
                    default -> say("UNKNOWN " + line);
                }
            }
        }
    }

    private static void say(final String line)
    {
        System.out.println(line);
        System.out.flush();
    }

    /**
     * Send REGISTER_PROCESS_MEMORY and wait for its answer.
     */
    static ControlFrame register(
        final RawControlSession session, final long correlationId, final long address, final long length,
        final String location)
    {
        return session.request(frame -> new ProcessMemoryRegistration(correlationId, address, length, location)
            .encode(frame), Duration.ofSeconds(20));
    }
}
