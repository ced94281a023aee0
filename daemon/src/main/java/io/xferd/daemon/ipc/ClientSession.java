package io.xferd.daemon.ipc;

import io.xferd.daemon.memory.RefCounted;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * One connected client process and its segment: who it is, its control socket, its completion ring and the
 * regions it registered. The conductor owns every mutation; the data plane reads the volatile region table
 * and borrows the session (see {@link RefCounted}) while a request of it, or to it, is in flight.
 */
public final class ClientSession extends RefCounted
{
    private final int slot;
    private final int generation;
    private final long sessionToken;
    private final String segmentName;
    private final byte[] segmentNameUtf8;
    private final int pid;
    private final int uid;
    private final UnixSocket socket;
    private final MemorySegment completionRingMapping;
    private final ManyToOneRingBuffer completionRing;
    private final ControlChannel channel;
    private volatile RegionTable regions = RegionTable.EMPTY;

    public ClientSession(
        final int slot,
        final int generation,
        final long sessionToken,
        final String segmentName,
        final String fullSegmentName,
        final int pid,
        final int uid,
        final UnixSocket socket,
        final ControlChannel channel,
        final MemorySegment completionRingMapping,
        final ManyToOneRingBuffer completionRing)
    {
        this.slot = slot;
        this.generation = generation;
        this.sessionToken = sessionToken;
        this.segmentName = segmentName;
        this.segmentNameUtf8 = fullSegmentName.getBytes(StandardCharsets.UTF_8);
        this.pid = pid;
        this.uid = uid;
        this.socket = socket;
        this.channel = channel;
        this.completionRingMapping = completionRingMapping;
        this.completionRing = completionRing;
    }

    public int slot()
    {
        return slot;
    }

    public int generation()
    {
        return generation;
    }

    public long segmentHandle()
    {
        return SegmentHandles.local(slot, generation);
    }

    public long sessionToken()
    {
        return sessionToken;
    }

    public String segmentName()
    {
        return segmentName;
    }

    /**
     * @return the full name, {@code host:port/name}, as notifications name their source.
     */
    public byte[] segmentNameUtf8()
    {
        return segmentNameUtf8;
    }

    public int pid()
    {
        return pid;
    }

    public int uid()
    {
        return uid;
    }

    public UnixSocket socket()
    {
        return socket;
    }

    public ControlChannel channel()
    {
        return channel;
    }

    public MemorySegment completionRingMapping()
    {
        return completionRingMapping;
    }

    public ManyToOneRingBuffer completionRing()
    {
        return completionRing;
    }

    public RegionTable regions()
    {
        return regions;
    }

    void regions(final RegionTable regions)
    {
        this.regions = regions;
    }

    @Override
    public String toString()
    {
        return "client[slot=" + slot + " pid=" + pid + " segment=" + segmentName + "]";
    }
}
