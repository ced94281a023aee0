package io.xferd.daemon.statusmap;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.xferd.daemon.statusmap.StatusFileDescriptor.*;

/**
 * Reads {@code <dir>/status.dat} (see {@link StatusFileDescriptor}) from another process: copies the body between
 * two reads of the sequence, retries a torn copy (or a file a larger one replaced) up to {@link #MAX_ATTEMPTS}
 * times, then decodes the private copy with every length and count checked. Plain maps and lists, in the order
 * {@code xferd status} shows them.
 */
public final class StatusFileReader
{
    /** Tries before a file that is always being written (or always replaced) is reported busy. */
    public static final int MAX_ATTEMPTS = 200;
    private static final int SPINS_BEFORE_SLEEP = 20;

    /**
     * What the file says: the settings, what the daemon found at start, and the clients with their regions
     * ({@code region_list}), by slot.
     */
    public record Snapshot(Map<String, Object> config, Map<String, Object> facts, List<Map<String, Object>> clients)
    {
    }

    /**
     * The file is not a status file of this layout, or its contents break it.
     */
    public static final class MalformedException extends RuntimeException
    {
        public MalformedException(final String message)
        {
            super(message);
        }
    }

    private StatusFileReader()
    {
    }

    /**
     * @return the snapshot, or null when the directory has no status file.
     * @throws MalformedException when the file is not one, or no whole copy was had in {@link #MAX_ATTEMPTS}.
     */
    public static Snapshot read(final Path directory)
    {
        final byte[] body = copyBody(directory.resolve(FILE));
        return body == null ? null : decode(body);
    }

    static byte[] copyBody(final Path file)
    {
        String why = "no attempt";
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            if (attempt >= SPINS_BEFORE_SLEEP)
            {
                sleepBriefly();
            }
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
            {
                final long size = channel.size();
                if (size < HEADER_LENGTH)
                {
                    throw new MalformedException(file + " is " + size + " bytes: shorter than its header");
                }
                final byte[] body =
                    copyOnce(channel, (int)Math.min(size, HEADER_LENGTH + (long)MAX_BODY_LENGTH), file);
                if (body != null)
                {
                    return body;
                }
                why = "being written or replaced at every attempt";
            }
            catch (final NoSuchFileException ex)
            {
                return null;
            }
            catch (final IOException ex)
            {
                throw new MalformedException("cannot read " + file + ": " + ex);
            }
        }
        throw new MalformedException("no whole snapshot in " + file + " after " + MAX_ATTEMPTS + " attempts: " + why);
    }

    /**
     * The file read with positional reads, not mapped (the first FileChannel.map of a JVM builds its buffer by
     * reflection, whose method handles were a third of a cold status run): the sequence, then the header and body,
     * then the sequence again; each read is a system call, so the three are ordered as the mapped loads were.
     *
     * @param length the file's bytes to read (header and body).
     * @return the body, or null when the copy was torn (try again).
     */
    static byte[] copyOnce(final FileChannel channel, final int length, final Path file) throws IOException
    {
        final long before = sequence(channel, file);
        final byte[] body = bodyOf(new UnsafeBuffer(readAt(channel, 0, length, file)), file, before);
        return body != null && sequence(channel, file) == before ? body : null;
    }

    /**
     * @return the body, or null when the copy was torn (try again).
     */
    static byte[] copyOnce(final UnsafeBuffer header, final Path file)
    {
        final long before = header.getLongVolatile(SEQUENCE_OFFSET);
        final byte[] body = bodyOf(header, file, before);
        VarHandle.loadLoadFence();
        return body != null && header.getLongVolatile(SEQUENCE_OFFSET) == before ? body : null;
    }

    private static long sequence(final FileChannel channel, final Path file) throws IOException
    {
        return new UnsafeBuffer(readAt(channel, SEQUENCE_OFFSET, Long.BYTES, file)).getLong(0);
    }

    private static byte[] readAt(final FileChannel channel, final long position, final int length, final Path file)
        throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer, position + buffer.position()) < 0)
            {
                throw new MalformedException(file + " ended at " + (position + buffer.position()) + " bytes: " +
                    "shorter than its header says");
            }
        }
        return buffer.array();
    }

    /**
     * Check the header and copy the body out of a buffer that holds the file, given the sequence read before.
     *
     * @return the body, or null when the sequence said a write was under way.
     */
    private static byte[] bodyOf(final UnsafeBuffer header, final Path file, final long before)
    {
        if (header.getInt(MAGIC_OFFSET) != MAGIC)
        {
            throw new MalformedException(file + " is not an xferd status file (magic " +
                Integer.toHexString(header.getInt(MAGIC_OFFSET)) + ")");
        }
        if (header.getInt(VERSION_OFFSET) != LAYOUT_VERSION)
        {
            throw new MalformedException(file + " has layout version " + header.getInt(VERSION_OFFSET) + ", this " +
                "xferd reads " + LAYOUT_VERSION);
        }
        if ((before & 1) != 0)
        {
            return null;
        }
        final int length = header.getInt(BODY_LENGTH_OFFSET);
        if (length < 0 || length > header.capacity() - HEADER_LENGTH)
        {
            throw new MalformedException(file + " says its body is " + length + " bytes; the file holds " +
                (header.capacity() - HEADER_LENGTH));
        }
        final byte[] body = new byte[length];
        header.getBytes(HEADER_LENGTH, body);
        return body;
    }

    /**
     * Decode a whole body (a private copy: nothing changes under the checks).
     */
    static Snapshot decode(final byte[] bytes)
    {
        final UnsafeBuffer body = new UnsafeBuffer(bytes);
        final Map<String, Object> config = new LinkedHashMap<>();
        final Map<String, Object> facts = new LinkedHashMap<>();
        final Map<Integer, Map<String, Object>> clients = new TreeMap<>();
        final List<int[]> regionAt = new ArrayList<>();
        final int[] at = new int[1];
        while (at[0] < bytes.length)
        {
            final int start = at[0];
            need(bytes, start, RECORD_HEADER_LENGTH);
            final int type = body.getInt(start);
            final int length = body.getInt(start + 4);
            if (length < RECORD_HEADER_LENGTH || length > bytes.length - start)
            {
                throw new MalformedException("record at " + start + " has length " + length);
            }
            final int end = start + length;
            at[0] = start + RECORD_HEADER_LENGTH;
            switch (type)
            {
                case CONFIG -> config.put(string(body, at, end), configValue(body, at, end));
                case FACT -> facts.put(string(body, at, end), configValue(body, at, end));
                case CLIENT ->
                {
                    final int slot = getInt(body, at, end);
                    final int pid = getInt(body, at, end);
                    final int uid = getInt(body, at, end);
                    final int regions = getInt(body, at, end);
                    final long registered = getLong(body, at, end);
                    final String connectedAt = string(body, at, end);
                    final String segment = string(body, at, end);
                    final String fullName = string(body, at, end);
                    final Map<String, Object> client = new LinkedHashMap<>();
                    client.put("slot", slot);
                    client.put("segment", segment);
                    client.put("full_name", fullName);
                    client.put("pid", pid);
                    client.put("uid", uid);
                    client.put("connected_at", connectedAt);
                    client.put("regions", regions);
                    client.put("registered_bytes", registered);
                    client.put("region_list", new ArrayList<>());
                    clients.put(slot, client);
                }
                case REGION -> regionAt.add(new int[]{start + RECORD_HEADER_LENGTH, end});
                default -> throw new MalformedException("record at " + start + " has unknown type " + type);
            }
            if (type != REGION && at[0] != end)
            {
                throw new MalformedException("record at " + start + " of type " + type + " has " + (end - at[0]) +
                    " bytes it does not use");
            }
            at[0] = end;
        }
        for (final int[] range : regionAt)
        {
            at[0] = range[0];
            final int slot = getInt(body, at, range[1]);
            final Map<String, Object> region = new LinkedHashMap<>();
            region.put("address", "0x" + Long.toHexString(getLong(body, at, range[1])));
            region.put("length", getLong(body, at, range[1]));
            region.put("location", string(body, at, range[1]));
            final String storage = string(body, at, range[1]);
            if (!storage.isEmpty())
            {
                region.put("storage", storage);
            }
            if (at[0] != range[1])
            {
                throw new MalformedException("region record at " + (range[0] - RECORD_HEADER_LENGTH) +
                    " has bytes it does not use");
            }
            final Map<String, Object> client = clients.get(slot);
            if (client != null)
            {
                @SuppressWarnings("unchecked")
                final List<Object> list = (List<Object>)client.get("region_list");
                list.add(region);
            }
        }
        return new Snapshot(config, facts, new ArrayList<>(clients.values()));
    }

    private static Object configValue(final UnsafeBuffer body, final int[] at, final int end)
    {
        need(end, at[0], 1);
        final byte kind = body.getByte(at[0]++);
        return switch (kind)
        {
            case KIND_STRING -> string(body, at, end);
            case KIND_LONG -> getLong(body, at, end);
            case KIND_BOOLEAN ->
            {
                need(end, at[0], 1);
                yield body.getByte(at[0]++) != 0;
            }
            case KIND_NULL -> null;
            default -> throw new MalformedException("setting of unknown kind " + kind);
        };
    }

    private static String string(final UnsafeBuffer body, final int[] at, final int end)
    {
        final int length = getInt(body, at, end);
        if (length < 0 || length > MAX_STRING_LENGTH)
        {
            throw new MalformedException("string of length " + length + " at " + (at[0] - 4));
        }
        need(end, at[0], length);
        final String value = body.getStringWithoutLengthUtf8(at[0], length);
        at[0] += length;
        return value;
    }

    private static int getInt(final UnsafeBuffer body, final int[] at, final int end)
    {
        need(end, at[0], Integer.BYTES);
        final int value = body.getInt(at[0]);
        at[0] += Integer.BYTES;
        return value;
    }

    private static long getLong(final UnsafeBuffer body, final int[] at, final int end)
    {
        need(end, at[0], Long.BYTES);
        final long value = body.getLong(at[0]);
        at[0] += Long.BYTES;
        return value;
    }

    private static void need(final byte[] bytes, final int at, final int length)
    {
        need(bytes.length, at, length);
    }

    private static void need(final int end, final int at, final int length)
    {
        if (length > end - at)
        {
            throw new MalformedException("a field at " + at + " needs " + length + " bytes, its record has " +
                (end - at));
        }
    }

    private static void sleepBriefly()
    {
        try
        {
            Thread.sleep(1);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new MalformedException("interrupted while waiting for a whole snapshot");
        }
    }
}
