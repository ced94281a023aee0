package io.xferd.daemon.transport;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import org.agrona.DirectBuffer;

/**
 * A request to move bytes between a local region and another daemon's segment, as a caller hands it to
 * {@link PeerTransport#submit(RemoteRequest)}. A reusable flyweight owned by the caller (one per transfer worker),
 * filled in place for each request: the transport copies what it keeps before {@code submit} returns, so the caller
 * may refill it at once and the hot path allocates nothing. Not thread-safe.
 */
public final class RemoteRequest
{
    private ClientSession submitter;
    private long requestId;
    private long traceId;
    private int opcode;
    private Region local;
    private long localAddress;
    private RemoteSegment target;
    private long targetAddress;
    private long length;
    private long submitNanos;
    private long intakeNanos;
    private DirectBuffer notification;
    private int notificationLength;
    private BatchTracker batch;
    private int batchEntry;
    private CoalescedRequests members;

    /**
     * Forget every reference (session, regions, batch, notification) so a filled-in request held by an idle
     * caller keeps nothing alive; the numbers go back to zero.
     *
     * @return this for a fluent API.
     */
    public RemoteRequest reset()
    {
        submitter = null;
        requestId = 0;
        traceId = 0;
        opcode = 0;
        local = null;
        localAddress = 0;
        target = null;
        targetAddress = 0;
        length = 0;
        submitNanos = 0;
        intakeNanos = 0;
        notification = null;
        notificationLength = 0;
        batch = null;
        batchEntry = 0;
        members = null;
        return this;
    }

    /**
     * @param submitter the client the request is for; the caller has borrowed it.
     * @return this for a fluent API.
     */
    public RemoteRequest submitter(final ClientSession submitter)
    {
        this.submitter = submitter;
        return this;
    }

    public ClientSession submitter()
    {
        return submitter;
    }

    /**
     * @param requestId the client's id for the request (its completion carries it) and the trace id it journals
     * under.
     * @return this for a fluent API.
     */
    public RemoteRequest ids(final long requestId, final long traceId)
    {
        this.requestId = requestId;
        this.traceId = traceId;
        return this;
    }

    public long requestId()
    {
        return requestId;
    }

    public long traceId()
    {
        return traceId;
    }

    /**
     * @param opcode {@link io.xferd.ipc.Opcode#READ} (remote into local) or {@link io.xferd.ipc.Opcode#WRITE}.
     * @return this for a fluent API.
     */
    public RemoteRequest opcode(final int opcode)
    {
        this.opcode = opcode;
        return this;
    }

    public int opcode()
    {
        return opcode;
    }

    /**
     * @param local the local region holding [localAddress, localAddress + length); the caller has borrowed it.
     * @return this for a fluent API.
     */
    public RemoteRequest local(final Region local, final long localAddress)
    {
        this.local = local;
        this.localAddress = localAddress;
        return this;
    }

    public Region local()
    {
        return local;
    }

    public long localAddress()
    {
        return localAddress;
    }

    /**
     * @param target the remote segment and the address in its owner's space where the bytes start.
     * @return this for a fluent API.
     */
    public RemoteRequest target(final RemoteSegment target, final long targetAddress)
    {
        this.target = target;
        this.targetAddress = targetAddress;
        return this;
    }

    public RemoteSegment target()
    {
        return target;
    }

    public long targetAddress()
    {
        return targetAddress;
    }

    public RemoteRequest length(final long length)
    {
        this.length = length;
        return this;
    }

    public long length()
    {
        return length;
    }

    /**
     * @param submitNanos when the client stamped the request, and {@code intakeNanos} when the daemon took it in
     * (both journaled; the completion's latency counts from intake).
     * @return this for a fluent API.
     */
    public RemoteRequest times(final long submitNanos, final long intakeNanos)
    {
        this.submitNanos = submitNanos;
        this.intakeNanos = intakeNanos;
        return this;
    }

    public long submitNanos()
    {
        return submitNanos;
    }

    public long intakeNanos()
    {
        return intakeNanos;
    }

    /**
     * @param notification for the target's owner after a WRITE (its first {@code notificationLength} bytes),
     * or null with 0 for none. The transport copies it before {@code submit} returns.
     * @return this for a fluent API.
     */
    public RemoteRequest notification(final DirectBuffer notification, final int notificationLength)
    {
        this.notification = notification;
        this.notificationLength = notificationLength;
        return this;
    }

    public DirectBuffer notification()
    {
        return notification;
    }

    public int notificationLength()
    {
        return notificationLength;
    }

    /**
     * @param batch the SUBMIT_BATCH this request is entry {@code batchEntry} of: its end is counted into the batch
     * ({@link io.xferd.daemon.session.CompletionSender}), which answers the client once; null for a SUBMIT.
     * @return this for a fluent API.
     */
    public RemoteRequest batch(final BatchTracker batch, final int batchEntry)
    {
        this.batch = batch;
        this.batchEntry = batchEntry;
        return this;
    }

    public BatchTracker batch()
    {
        return batch;
    }

    public int batchEntry()
    {
        return batchEntry;
    }

    /**
     * @param members the requests this transfer carries when intake merged adjacent ones (each answered on its own
     * once every byte arrived, each failed when the transfer fails), or null (or empty) for one request. The
     * transport copies them before {@code submit} returns.
     * @return this for a fluent API.
     */
    public RemoteRequest members(final CoalescedRequests members)
    {
        this.members = members;
        return this;
    }

    /**
     * @return the merged requests, or null for a transfer of one request.
     */
    public CoalescedRequests members()
    {
        return members == null || members.count() == 0 ? null : members;
    }
}
