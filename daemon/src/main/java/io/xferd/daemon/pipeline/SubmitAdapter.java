package io.xferd.daemon.pipeline;

import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import io.xferd.daemon.SystemCounters;
import io.xferd.daemon.ipc.ClientRegistry;
import io.xferd.daemon.ipc.ClientSession;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * Intake: reads SUBMIT records from the to-daemon ring, checks that each names a connected client by slot and
 * session token and is well formed, and publishes it into the {@link TransferPipeline}. A record that is not
 * well formed costs its author the connection (queued for the conductor); other clients carry on. When the
 * pipeline is full, records stay in the ring (back-pressure on all clients, nothing is dropped).
 */
public final class SubmitAdapter implements Agent, ControlledMessageHandler
{
    private static final int READ_LIMIT = 64;

    private final org.agrona.concurrent.ringbuffer.RingBuffer toDaemonRing;
    private final RingBuffer<TransferCommand> pipeline;
    private final ClientRegistry registry;
    private final ManyToOneConcurrentArrayQueue<ClientSession> disconnects;
    private final NanoClock clock;
    private final SubmitRequestFlyweight request = new SubmitRequestFlyweight();
    private final AtomicCounter submitted;
    private final AtomicCounter malformed;
    private final AtomicCounter backpressure;
    private final TransferJournal journal;

    public SubmitAdapter(
        final org.agrona.concurrent.ringbuffer.RingBuffer toDaemonRing,
        final RingBuffer<TransferCommand> pipeline,
        final ClientRegistry registry,
        final ManyToOneConcurrentArrayQueue<ClientSession> disconnects,
        final SystemCounters counters,
        final NanoClock clock,
        final TransferJournal journal)
    {
        this.toDaemonRing = toDaemonRing;
        this.pipeline = pipeline;
        this.registry = registry;
        this.disconnects = disconnects;
        this.clock = clock;
        this.journal = journal;
        this.submitted = counters.get(SystemCounter.REQUESTS_SUBMITTED);
        this.malformed = counters.get(SystemCounter.MALFORMED_RECORDS);
        this.backpressure = counters.get(SystemCounter.PIPELINE_BACKPRESSURE);
    }

    @Override
    public int doWork()
    {
        return toDaemonRing.controlledRead(this, READ_LIMIT);
    }

    @Override
    public Action onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (length < 16)
        {
            malformed.increment();
            return Action.CONTINUE;
        }
        request.wrap(buffer, index);
        final ClientSession session = registry.authenticated(request.clientSlot(), request.sessionToken());
        if (session == null)
        {
            // cannot be attributed to anyone: count and skip
            malformed.increment();
            return Action.CONTINUE;
        }
        if (msgTypeId != RecordTypes.SUBMIT || length < SubmitRequestFlyweight.HEADER_LENGTH ||
            request.notifyLength() < 0 || request.notifyLength() > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH ||
            SubmitRequestFlyweight.recordLength(request.notifyLength()) != length)
        {
            malformed.increment();
            disconnects.offer(session);
            return Action.CONTINUE;
        }

        final long sequence;
        try
        {
            sequence = pipeline.tryNext();
        }
        catch (final InsufficientCapacityException ex)
        {
            backpressure.increment();
            return Action.ABORT;
        }

        final TransferCommand command = pipeline.get(sequence);
        if (session.tryAcquire())
        {
            command.submitter = session;
            command.requestId = request.requestId();
            command.opcode = request.opcode();
            command.segmentHandle = request.segmentHandle();
            command.localAddress = request.localAddress();
            command.targetAddress = request.targetAddress();
            command.length = request.length();
            command.traceId = request.traceId();
            command.submitNanos = request.submitNanos();
            command.intakeNanos = clock.nanoTime();
            command.notifyLength = request.notifyLength();
            if (command.notifyLength > 0)
            {
                command.notify.putBytes(0, buffer, request.notifyOffset(), command.notifyLength);
            }
            submitted.increment();
            journal.onSubmitted(session.slot(), command.requestId, command.traceId, command.opcode, command.length,
                command.submitNanos, command.intakeNanos);
        }
        else
        {
            // the client is being closed: publish an empty command so the sequence is not lost
            command.clear();
        }
        pipeline.publish(sequence);
        return Action.CONTINUE;
    }

    @Override
    public String roleName()
    {
        return "xferd-intake";
    }
}
