package io.xferd.daemon.statusmap;

import io.xferd.daemon.control.ConductorListener;
import io.xferd.daemon.files.FileModes;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import static io.xferd.daemon.statusmap.StatusFileDescriptor.*;

/**
 * Publishes {@code <dir>/status.dat} (see {@link StatusFileDescriptor}) on the conductor thread: a change marks the
 * snapshot stale, and a housekeeping pass republishes a stale one, at most once every
 * {@link #MIN_PUBLISH_INTERVAL_MS} (a client registering thousands of regions costs a few snapshots, not one per
 * region). Control plane: allocates, never touches the data plane. A snapshot that outgrows the file goes into a
 * file twice as large, renamed over this one. A failure is logged once and the daemon carries on: the file is for
 * observers, the daemon never reads it back. Removed on a clean shutdown.
 */
public final class StatusFileWriter implements ConductorListener, AutoCloseable
{
    /** The least time between two snapshots while the clients and their regions change. */
    public static final long MIN_PUBLISH_INTERVAL_MS = 10;

    private static final Logger LOG = LoggerFactory.getLogger(StatusFileWriter.class);

    private final Path file;
    private final Map<String, Object> config;
    private final Map<String, Object> facts;
    private final EpochClock clock;
    private final Map<Integer, ClientSession> clients = new TreeMap<>();
    private final Map<Integer, String> connectedAt = new HashMap<>();
    private final ExpandableArrayBuffer body = new ExpandableArrayBuffer(4096);
    private MappedByteBuffer mapping;
    private UnsafeBuffer buffer;
    private long sequence;
    private long publishedAtMs;
    private boolean stale;
    private boolean failedOnce;

    private StatusFileWriter(
        final Path file, final Map<String, Object> config, final Map<String, Object> facts, final EpochClock clock)
    {
        this.file = file;
        this.config = config;
        this.facts = facts;
        this.clock = clock;
    }

    /**
     * Create the file in the daemon's (claimed) directory, replacing one a crashed daemon left, and publish the
     * first snapshot (the settings, no clients).
     *
     * @param facts what the daemon found at start, for status to show without finding it again.
     */
    public static StatusFileWriter create(
        final Path directory, final Map<String, Object> config, final Map<String, Object> facts, final EpochClock clock)
    {
        final StatusFileWriter writer = new StatusFileWriter(directory.resolve(FILE), config, facts, clock);
        writer.map(writer.file, MIN_BODY_CAPACITY);
        writer.publish(clock.time());
        return writer;
    }

    @Override
    public void onClientConnected(final ClientSession session)
    {
        clients.put(session.slot(), session);
        connectedAt.put(session.slot(), Instant.ofEpochMilli(clock.time()).toString());
        stale = true;
    }

    @Override
    public void onRegionAdded(final ClientSession session, final Region region)
    {
        stale = true;
    }

    @Override
    public void onRegionRemoved(final ClientSession session, final Region region)
    {
        stale = true;
    }

    @Override
    public void onRegionsChanged(final ClientSession session)
    {
        stale = true;
    }

    @Override
    public void onClientDisconnected(final ClientSession session)
    {
        clients.remove(session.slot());
        connectedAt.remove(session.slot());
        stale = true;
    }

    @Override
    public void onHousekeeping(final long nowMs)
    {
        if (stale && nowMs - publishedAtMs >= MIN_PUBLISH_INTERVAL_MS)
        {
            publish(nowMs);
        }
    }

    /**
     * @return true while a change waits for its snapshot.
     */
    boolean isStale()
    {
        return stale;
    }

    void publish(final long nowMs)
    {
        stale = false;
        publishedAtMs = nowMs;
        if (buffer == null)
        {
            return; // failed before: said once
        }
        try
        {
            final int length = encode();
            if (length > buffer.getInt(BODY_CAPACITY_OFFSET))
            {
                grow(length, nowMs);
                return;
            }
            write(buffer, length, nowMs);
        }
        catch (final RuntimeException ex)
        {
            failed(ex);
        }
    }

    /**
     * The seqlock's writer side: odd, the body, even again (a reader that saw the same even value on both sides of
     * its copy has a whole snapshot).
     */
    private void write(final UnsafeBuffer target, final int length, final long nowMs)
    {
        sequence++;
        target.putLongVolatile(SEQUENCE_OFFSET, sequence);
        VarHandle.storeStoreFence();
        target.putBytes(HEADER_LENGTH, body, 0, length);
        target.putInt(BODY_LENGTH_OFFSET, length);
        target.putLong(PUBLISHED_AT_OFFSET, nowMs);
        sequence++;
        target.putLongOrdered(SEQUENCE_OFFSET, sequence);
    }

    private void grow(final int length, final long nowMs)
    {
        final MappedByteBuffer oldMapping = mapping;
        final UnsafeBuffer oldBuffer = buffer;
        final Path next = file.resolveSibling(FILE + ".new");
        int capacity = MIN_BODY_CAPACITY;
        while (capacity < length)
        {
            capacity *= 2;
        }
        map(next, capacity);
        if (buffer == null)
        {
            return;
        }
        write(buffer, length, nowMs);
        try
        {
            Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException ex)
        {
            failed(new IllegalStateException("cannot rename " + next + ": " + ex, ex));
            return;
        }
        // a reader that opened the old file sees this and opens the new one
        oldBuffer.putLongOrdered(SEQUENCE_OFFSET, SUPERSEDED);
        IoUtil.unmap(oldMapping);
    }

    private void map(final Path target, final int capacity)
    {
        try
        {
            Files.deleteIfExists(target);
            mapping = IoUtil.mapNewFile(target.toFile(), HEADER_LENGTH + (long)capacity, true);
            FileModes.set(target, FileModes.GROUP_READABLE);
        }
        catch (final IOException | RuntimeException ex)
        {
            buffer = null;
            failed(new IllegalStateException("cannot create " + target + ": " + ex, ex));
            return;
        }
        buffer = new UnsafeBuffer(mapping);
        buffer.putInt(VERSION_OFFSET, LAYOUT_VERSION);
        buffer.putInt(BODY_CAPACITY_OFFSET, capacity);
        buffer.putLong(SEQUENCE_OFFSET, sequence);
        buffer.putIntOrdered(MAGIC_OFFSET, MAGIC);
    }

    private int encode()
    {
        int at = putSettings(0, CONFIG, config);
        at = putSettings(at, FACT, facts);
        for (final ClientSession session : clients.values())
        {
            final RegionTable regions = session.regions();
            final int start = at;
            at += RECORD_HEADER_LENGTH;
            body.putInt(at, session.slot());
            body.putInt(at + 4, session.pid());
            body.putInt(at + 8, session.uid());
            body.putInt(at + 12, regions.size());
            body.putLong(at + 16, regions.totalBytes());
            at = putString(at + 24, connectedAt.getOrDefault(session.slot(), ""));
            at = putString(at, session.segmentName());
            at = putString(at, new String(session.segmentNameUtf8(), StandardCharsets.UTF_8));
            at = endRecord(start, CLIENT, at);
            for (int i = 0; i < regions.size(); i++)
            {
                final Region region = regions.get(i);
                final int regionStart = at;
                at += RECORD_HEADER_LENGTH;
                body.putInt(at, session.slot());
                body.putLong(at + 4, region.ownerAddress());
                body.putLong(at + 12, region.length());
                at = putString(at + 20, region.location());
                at = putString(at, region.isFile() ? region.file().describe() : "");
                at = endRecord(regionStart, REGION, at);
            }
        }
        return at;
    }

    private int putSettings(final int from, final int type, final Map<String, Object> settings)
    {
        int at = from;
        for (final Map.Entry<String, Object> entry : settings.entrySet())
        {
            final int start = at;
            at += RECORD_HEADER_LENGTH;
            at = putString(at, entry.getKey());
            final Object value = entry.getValue();
            if (value == null)
            {
                body.putByte(at++, KIND_NULL);
            }
            else if (value instanceof Boolean flag)
            {
                body.putByte(at++, KIND_BOOLEAN);
                body.putByte(at++, (byte)(flag ? 1 : 0));
            }
            else if (value instanceof Integer || value instanceof Long || value instanceof Short)
            {
                body.putByte(at++, KIND_LONG);
                body.putLong(at, ((Number)value).longValue());
                at += Long.BYTES;
            }
            else
            {
                body.putByte(at++, KIND_STRING);
                at = putString(at, value.toString());
            }
            at = endRecord(start, type, at);
        }
        return at;
    }

    private int endRecord(final int start, final int type, final int end)
    {
        body.putInt(start, type);
        body.putInt(start + 4, end - start);
        return end;
    }

    private int putString(final int at, final String value)
    {
        final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        final int length = Math.min(bytes.length, MAX_STRING_LENGTH);
        body.putInt(at, length);
        body.putBytes(at + 4, bytes, 0, length);
        return at + 4 + length;
    }

    private void failed(final RuntimeException ex)
    {
        if (!failedOnce)
        {
            failedOnce = true;
            LOG.warn("{} not updated (xferd status may be stale): {}", file, ex.toString());
        }
    }

    @Override
    public void close()
    {
        if (mapping != null)
        {
            IoUtil.unmap(mapping);
            mapping = null;
            buffer = null;
        }
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            LOG.warn("cannot remove {}: {}", file, ex.toString());
        }
    }
}
