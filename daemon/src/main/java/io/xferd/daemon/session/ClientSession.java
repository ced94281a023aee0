package io.xferd.daemon.session;

import io.xferd.daemon.memory.RefCounted;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.ipc.Doorbell;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.libc.UnixSocket;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.Queue;

/**
 * One connected client process and its segment: who it is, its control socket, its rings (the completion ring the
 * daemon writes, the submit ring only this client writes) and the regions it registered. The conductor owns every mutation; the data plane reads the volatile region table
 * and borrows the session (see {@link RefCounted}) while a request of it, or to it, is in flight.
 */
public final class ClientSession extends RefCounted
{
    private static final VarHandle CUT_OFF_QUEUED;

    static
    {
        try
        {
            CUT_OFF_QUEUED = MethodHandles.lookup().findVarHandle(ClientSession.class, "cutOffQueued", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final int slot;
    private final int generation;
    private final String segmentName;
    private final byte[] segmentNameUtf8;
    private final int pid;
    private final int uid;
    private final int gid;
    private final UnixSocket socket;
    private final MemorySegment ringsMapping;
    private final ManyToOneRingBuffer completionRing;
    private final Doorbell completionDoorbell;
    private final SubmitRing submitRing;
    private final ControlChannel channel;
    private volatile RegionTable regions = RegionTable.EMPTY;
    private volatile String protocolViolation;
    @SuppressWarnings("unused") // through CUT_OFF_QUEUED
    private volatile int cutOffQueued;
    private int pendingControl;

    public ClientSession(
        final int slot,
        final int generation,
        final String segmentName,
        final String fullSegmentName,
        final int pid,
        final int uid,
        final int gid,
        final UnixSocket socket,
        final ControlChannel channel,
        final MemorySegment ringsMapping,
        final ManyToOneRingBuffer completionRing,
        final SubmitRing submitRing)
    {
        this.slot = slot;
        this.generation = generation;
        this.segmentName = segmentName;
        this.segmentNameUtf8 = fullSegmentName.getBytes(StandardCharsets.UTF_8);
        this.pid = pid;
        this.uid = uid;
        this.gid = gid;
        this.socket = socket;
        this.channel = channel;
        this.ringsMapping = ringsMapping;
        this.completionRing = completionRing;
        // null only in tests that never complete a request of this session
        this.completionDoorbell = completionRing == null ? null :
            new Doorbell(completionRing.buffer(), RingsFileDescriptor.COMPLETION_DOORBELL_OFFSET);
        this.submitRing = submitRing;
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

    /**
     * @return the client's primary gid (SO_PEERCRED), as the {@link AccessPolicy} sees it.
     */
    public int gid()
    {
        return gid;
    }

    public UnixSocket socket()
    {
        return socket;
    }

    public ControlChannel channel()
    {
        return channel;
    }

    /**
     * @return the mapping of the whole rings file (completion ring, then submit ring), unmapped at reclaim.
     */
    public MemorySegment ringsMapping()
    {
        return ringsMapping;
    }

    /**
     * @return the daemon's end of this client's submit ring; intake thread only.
     */
    public SubmitRing submitRing()
    {
        return submitRing;
    }



    public ManyToOneRingBuffer completionRing()
    {
        return completionRing;
    }

    /**
     * Wake this client if it sleeps on its completion ring's doorbell: call after committing a record there.
     */
    void ringCompletionDoorbell()
    {
        completionDoorbell.ring();
    }

    /**
     * Why the data plane wants this client cut off (set before it is queued for the conductor), or null.
     */
    public String protocolViolation()
    {
        return protocolViolation;
    }

    public void protocolViolation(final String reason)
    {
        if (protocolViolation == null)
        {
            protocolViolation = reason;
        }
    }

    /**
     * Queues this session for the conductor to cut off, once: a client whose completion ring is full fails every
     * completion after the first, and queueing it for each would fill the bounded queue so that another client's
     * cut-off was lost. An offer the full queue refused is made again by the next caller. Any thread.
     */
    public void queueCutOff(final Queue<ClientSession> disconnects)
    {
        if (cutOffQueued == 0 && CUT_OFF_QUEUED.compareAndSet(this, 0, 1) && !disconnects.offer(this))
        {
            CUT_OFF_QUEUED.setRelease(this, 0);
        }
    }

    /**
     * @return control requests of this client the conductor holds unanswered; conductor thread only.
     */
    public int pendingControl()
    {
        return pendingControl;
    }

    public void pendingControl(final int delta)
    {
        pendingControl += delta;
    }

    public RegionTable regions()
    {
        return regions;
    }

    public void regions(final RegionTable regions)
    {
        this.regions = regions;
    }

    @Override
    public String toString()
    {
        return "client[slot=" + slot + " segment=" + segmentName + " pid=" + pid + " uid=" + uid + "]";
    }
}
