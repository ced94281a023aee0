package io.xferd.daemon.pipeline;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.YieldingWaitStrategy;

/**
 * The daemon's staged pipeline on an LMAX Disruptor ring: intake publishes one {@link TransferCommand} per
 * request; N transfer workers each poll it, worker i taking the sequences with {@code sequence % N == i}.
 * Stages are polled ({@link EventPoller}), not run on the Disruptor's own threads, so that Agrona agents drive
 * them and several can share one thread on a small host.
 */
public final class TransferPipeline
{
    private final RingBuffer<TransferCommand> ring;
    private final EventPoller<TransferCommand>[] workerPollers;

    @SuppressWarnings("unchecked")
    public TransferPipeline(final int size, final int workers)
    {
        // the wait strategy is never used for blocking: pollers and tryNext only
        ring = RingBuffer.createSingleProducer(TransferCommand::new, size, new YieldingWaitStrategy());
        workerPollers = new EventPoller[workers];
        final Sequence[] gating = new Sequence[workers];
        for (int i = 0; i < workers; i++)
        {
            workerPollers[i] = ring.newPoller();
            gating[i] = workerPollers[i].getSequence();
        }
        ring.addGatingSequences(gating);
    }

    public RingBuffer<TransferCommand> ring()
    {
        return ring;
    }

    public EventPoller<TransferCommand> workerPoller(final int index)
    {
        return workerPollers[index];
    }

    public int workers()
    {
        return workerPollers.length;
    }

    /**
     * @return true when every published command has been taken by its worker.
     */
    public boolean isIdle()
    {
        final long cursor = ring.getCursor();
        for (final EventPoller<TransferCommand> poller : workerPollers)
        {
            if (poller.getSequence().get() < cursor)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return commands published and not yet taken by the slowest worker.
     */
    public long backlog()
    {
        long min = Long.MAX_VALUE;
        for (final EventPoller<TransferCommand> poller : workerPollers)
        {
            min = Math.min(min, poller.getSequence().get());
        }
        return ring.getCursor() - min;
    }
}
