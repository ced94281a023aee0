package io.xferd.daemon.tools.bench;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.HdrHistogram.Histogram;

/**
 * One bench thread: its own client, its own local buffer and its own range of the target. Keeps a window of
 * batches in flight for a given time, recording each request's submit-to-completion latency in its own
 * histogram (merged by the caller once the thread ended: nothing is shared while it runs).
 */
final class ThroughputWorker
{
    private static final long AWAIT_TIMEOUT_MS = 30_000;

    private final XferClient client;
    private final long segment;
    private final int opcode;
    private final SharedBuffer local;
    private final long targetBase;
    private final long targetOffset;
    private final long span;
    private final long blockSize;
    private final int batchSize;
    private final int window;
    private final TransferRequest request = new TransferRequest();
    private final long[] batches;
    private long random;
    private final Histogram latency = LatencyReport.newHistogram();
    private long requests;
    private long failed;
    private int firstFailureStatus = TransferStatus.OK;
    private long elapsedNanos;

    /**
     * @param targetAddress the target buffer's address (as its owner registered it).
     * @param targetOffset  where this thread's range starts within the target buffer.
     * @param span          bytes of this thread's range, a multiple of {@code blockSize}; also the local buffer's size.
     */
    ThroughputWorker(final XferClient client, final long segment, final int opcode, final SharedBuffer local,
        final long targetAddress, final long targetOffset, final long span, final long blockSize,
        final int batchSize, final int window)
    {
        this.client = client;
        this.segment = segment;
        this.opcode = opcode;
        this.local = local;
        this.targetBase = targetAddress + targetOffset;
        this.targetOffset = targetOffset;
        this.span = span;
        this.blockSize = blockSize;
        this.batchSize = batchSize;
        this.window = window;
        this.batches = new long[window];
    }

    /**
     * Visit blocks in a seeded random order instead of one after the other (random-read benchmarks).
     */
    ThroughputWorker randomOrder(final long seed)
    {
        this.random = seed | 1;
        return this;
    }

    /**
     * Submit batch after batch, at most {@code window} in flight, until {@code durationNanos} passed (or a
     * request failed), then wait for the last ones.
     */
    void run(final long durationNanos)
    {
        final long blocksInSpan = span / blockSize;
        final long localBase = local.address();
        final long start = System.nanoTime();
        final long deadline = start + durationNanos;
        long block = 0;
        long submitted = 0;
        while (failed == 0 && System.nanoTime() - deadline < 0)
        {
            // refill whichever batch finished first, as fio refills any completed I/O: waiting for the oldest
            // would leave the window short whenever a younger request finished before it (random reads)
            final int slot = submitted < window ? (int)submitted :
                client.awaitAnyBatch(batches, window, AWAIT_TIMEOUT_MS);
            if (submitted >= window)
            {
                finish(batches[slot]);
            }
            final long batch = client.allocateBatch(batchSize);
            for (int i = 0; i < batchSize; i++)
            {
                final long offset = block * blockSize;
                client.submitTransfer(batch, request.set(opcode, localBase + offset, segment, targetBase + offset,
                    blockSize));
                block = random != 0 ? nextRandomBlock(blocksInSpan) : block + 1 == blocksInSpan ? 0 : block + 1;
            }
            batches[slot] = batch;
            submitted++;
        }
        for (int slot = 0; slot < Math.min(submitted, window); slot++)
        {
            finish(batches[slot]);
        }
        elapsedNanos = System.nanoTime() - start;
    }

    private long nextRandomBlock(final long blocksInSpan)
    {
        // xorshift64: no allocation, the same sequence for the same seed
        random ^= random << 13;
        random ^= random >>> 7;
        random ^= random << 17;
        return Long.remainderUnsigned(random, blocksInSpan);
    }

    private void finish(final long batch)
    {
        client.awaitBatch(batch, AWAIT_TIMEOUT_MS);
        for (int i = 0; i < batchSize; i++)
        {
            if (client.taskState(batch, i) == TaskStatus.COMPLETED)
            {
                requests++;
            }
            else
            {
                if (failed++ == 0)
                {
                    firstFailureStatus = client.getTransferStatus(batch, i).status();
                }
            }
            latency.recordValue(Math.min(LatencyReport.HIGHEST_NANOS, Math.max(0, client.taskLatencyNanos(batch, i))));
        }
        client.freeBatch(batch);
    }

    /**
     * Forget what the warm-up recorded.
     */
    void reset()
    {
        latency.reset();
        requests = 0;
        elapsedNanos = 0;
    }

    /**
     * One checked pass over this thread's range. WRITE: write the pattern, read it back into {@code spare},
     * compare. READ: read the range (which the target filled with the pattern) and compare.
     *
     * @return null when every byte matched, else what went wrong.
     */
    String verify(final long seed, final SharedBuffer spare)
    {
        final SharedBuffer checked;
        if (opcode == Opcode.WRITE)
        {
            BenchPattern.fill(local.segment(), seed, targetOffset);
            if (!transferRange(Opcode.WRITE, local))
            {
                return "a verifying WRITE failed";
            }
            checked = spare;
        }
        else
        {
            checked = local;
        }
        checked.segment().fill((byte)0);
        if (!transferRange(Opcode.READ, checked))
        {
            return "a verifying READ failed";
        }
        final long mismatch = BenchPattern.firstMismatch(checked.segment(), seed, targetOffset);
        if (mismatch >= 0)
        {
            return "byte " + (targetOffset + mismatch) + " of the target differs from the pattern of seed " + seed +
                (opcode == Opcode.READ ? " (was bench-target started with --pattern " + seed + "?)" : "");
        }
        return null;
    }

    private boolean transferRange(final int op, final SharedBuffer buffer)
    {
        boolean ok = true;
        for (long offset = 0; offset < span; offset += blockSize * batchSize)
        {
            final int count = (int)Math.min(batchSize, (span - offset) / blockSize);
            final long batch = client.allocateBatch(count);
            for (int i = 0; i < count; i++)
            {
                final long at = offset + i * blockSize;
                client.submitTransfer(batch, request.set(op, buffer.address() + at, segment, targetBase + at, blockSize));
            }
            ok &= client.awaitBatch(batch, AWAIT_TIMEOUT_MS);
            client.freeBatch(batch);
        }
        return ok;
    }

    Histogram latency()
    {
        return latency;
    }

    long requests()
    {
        return requests;
    }

    long failed()
    {
        return failed;
    }

    int firstFailureStatus()
    {
        return firstFailureStatus;
    }

    long elapsedNanos()
    {
        return elapsedNanos;
    }

    XferClient client()
    {
        return client;
    }
}
