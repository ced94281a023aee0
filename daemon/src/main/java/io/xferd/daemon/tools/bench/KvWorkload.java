package io.xferd.daemon.tools.bench;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.tools.demo.KvCacheLayout;
import io.xferd.ipc.Opcode;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The KV workload of {@code xferd bench --workload kv}: the shape of the seeds' disaggregated-serving benchmark.
 * Requests arrive open-loop at a given rate; each moves the KV cache of one prompt of Qwen2.5-7B (28 layers,
 * 4 KV heads, head dim 128, fp16: 57,344 bytes per token) as vLLM's paged cache holds it, one 32 KiB request per
 * layer per 16-token block, all in one batch, layer after layer. Records each request's transfer time (first
 * submit to last completion) and, apart, how long it waited in this client before its first submit (a request's
 * submission waits while the client is at its in-flight limit, so a big request delays the next arrival) and the
 * sum of both (arrival to last completion). Apart again, the transfer times of the prompts that ran alone (no other
 * prompt of this client in flight at any moment of their transfer: the daemon's own figure) and of those that
 * overlapped another (they shared the wire, so the arrivals set their time as much as the daemon), and the slowest
 * prompts with their arrival number (a first prompt slow is warm-up), queueing and overlap.
 * <p>
 * Each prompt's requests carry a trace id of their own (as a connector gives each prompt's transfer one), so the
 * daemon tells concurrent prompts apart when it interleaves their slices on the wire.
 * <p>
 * Arrivals: Poisson (exponential gaps, seeded) by default, or a fixed interval. Each prompt size runs as its
 * own phase of {@code requests} arrivals. At most {@code maxOutstanding} requests are in flight: an arrival
 * beyond that is dropped and counted, so a path that cannot keep up shows as drops, not as an ever-growing
 * backlog.
 */
public final class KvWorkload
{
    private static final KvCacheLayout BLOCK = KvCacheLayout.qwen25_7b(1);
    private static final long AWAIT_TIMEOUT_NS = 60_000_000_000L;
    private static final long VERIFY_TIMEOUT_MS = 60_000;
    /** Blocks read back per batch when verifying. */
    private static final int VERIFY_BLOCKS = 64;

    private final XferClient client;
    private final long segment;
    private final int opcode;
    private final SharedBuffer local;
    private final int maxBlocks;
    private final long targetAddress;
    private final long targetBlocks;
    private final long targetBlockBase;
    private final PrintStream out;
    private final Outstanding[] slots;
    private final TransferRequest request = new TransferRequest();
    private final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 1_000, 50_000);
    private KvPromptLog prompts = new KvPromptLog(0);
    private long failed;
    private long nextTraceId;
    private int largestTokensRun;

    private static final class Outstanding
    {
        final long[] submitted;
        // when each task's completion was written (its submit + the latency the client reports), kept after the batch
        // is freed until the slot is used again
        final long[] completed;
        boolean inUse;
        int ordinal;
        long batch;
        int tasks;
        long arrival;
        long firstSubmit;
        long lastCompleted;
        long traceId;

        Outstanding(final int maxTasks)
        {
            submitted = new long[maxTasks];
            completed = new long[maxTasks];
        }
    }

    /**
     * @param local a buffer of at least {@link #localBytes}(the largest prompt) bytes.
     */
    public KvWorkload(final XferClient client, final long segment, final int opcode, final SharedBuffer local,
        final int maxTokens, final long targetAddress, final long targetSize, final int maxOutstanding,
        final PrintStream out)
    {
        this(client, segment, opcode, local, maxTokens, targetAddress, targetSize, 0, maxOutstanding, out);
    }

    /**
     * @param targetBlockBase the target block this client's block 0 goes to (two clients of one target keep apart).
     */
    public KvWorkload(final XferClient client, final long segment, final int opcode, final SharedBuffer local,
        final int maxTokens, final long targetAddress, final long targetSize, final long targetBlockBase,
        final int maxOutstanding, final PrintStream out)
    {
        this.client = client;
        this.segment = segment;
        this.opcode = opcode;
        this.local = local;
        this.maxBlocks = blocks(maxTokens);
        this.targetAddress = targetAddress;
        this.targetBlocks = targetSize / BLOCK.blockBytes();
        if (targetBlocks < 1)
        {
            throw new IllegalArgumentException("the target is smaller than one KV block (" + BLOCK.blockBytes() + ")");
        }
        this.targetBlockBase = targetBlockBase;
        // the process id in the top bits: trace ids differ from run to run, so one run's prompts can be looked up in
        // a daemon's journal that holds earlier runs too (xferd profile --trace)
        this.nextTraceId = (ProcessHandle.current().pid() & 0x7FFF) << 48 | (segment & 0xFFFF) << 32 |
            (targetBlockBase & 0xFFFF) << 16;
        this.out = out;
        this.slots = new Outstanding[maxOutstanding];
        for (int i = 0; i < maxOutstanding; i++)
        {
            slots[i] = new Outstanding(maxBlocks * BLOCK.layers());
        }
    }

    static int blocks(final int tokens)
    {
        return (tokens + KvCacheLayout.TOKENS_PER_BLOCK - 1) / KvCacheLayout.TOKENS_PER_BLOCK;
    }

    /**
     * @return bytes one request of {@code tokens} moves (whole 16-token blocks), also the local buffer it needs.
     */
    public static long localBytes(final int tokens)
    {
        return (long)blocks(tokens) * BLOCK.layers() * BLOCK.blockBytes();
    }

    /**
     * Closed-loop requests of {@code tokens} for {@code warmup}, not recorded.
     */
    public void warmUp(final int tokens, final Duration warmup)
    {
        final long end = System.nanoTime() + warmup.toNanos();
        final Histogram ignored = LatencyReport.newHistogram();
        while (System.nanoTime() - end < 0)
        {
            start(slots[0], tokens, System.nanoTime(), 0);
            while (slots[0].inUse)
            {
                idle.idle(reap(ignored, ignored, ignored));
            }
        }
    }

    /**
     * Run one phase per prompt size and print its percentiles.
     *
     * @return the number of failed requests.
     */
    public long run(final List<Integer> promptTokens, final double qps, final boolean poisson, final int requests,
        final long seed, final LatencyReport log)
    {
        long failedTotal = 0;
        for (final int tokens : promptTokens)
        {
            largestTokensRun = Math.max(largestTokensRun, tokens);
            final Histogram transfer = LatencyReport.newHistogram();
            final Histogram queueing = LatencyReport.newHistogram();
            final Histogram total = LatencyReport.newHistogram();
            final SplittableRandom random = new SplittableRandom(seed + tokens);
            prompts = new KvPromptLog(requests);
            final double meanGapNs = 1e9 / qps;
            int arrivals = 0;
            int dropped = 0;
            int maxSeen = 0;
            failed = 0;
            long next = System.nanoTime() + gap(random, meanGapNs, poisson);
            final long phaseStart = System.nanoTime();
            while (transfer.getTotalCount() + dropped < requests)
            {
                if (arrivals < requests && System.nanoTime() - next >= 0)
                {
                    arrivals++;
                    final Outstanding slot = freeSlot();
                    if (slot == null)
                    {
                        dropped++;
                    }
                    else
                    {
                        start(slot, tokens, next, arrivals);
                        maxSeen = Math.max(maxSeen, outstanding());
                    }
                    next += gap(random, meanGapNs, poisson);
                    continue;
                }
                idle.idle(reap(transfer, queueing, total));
            }
            final double phaseSeconds = (System.nanoTime() - phaseStart) / 1e9;
            failedTotal += failed;
            report(tokens, qps, poisson, requests, transfer, queueing, total, dropped, maxSeen, phaseSeconds);
            log.add("kv-" + tokens + "-qps" + qps, transfer);
        }
        return failedTotal;
    }

    private void report(final int tokens, final double qps, final boolean poisson, final int requests,
        final Histogram transfer, final Histogram queueing, final Histogram total, final int dropped, final int maxSeen,
        final double phaseSeconds)
    {
        final long bytes = localBytes(tokens);
        out.printf(Locale.ROOT, "kv: %d-token requests (%,d bytes each: %d layers x %d blocks of %s), %d at %.1f QPS " +
            "(%s) in %.1f s: %d done, %d dropped, %d failed, at most %d outstanding%n", tokens, bytes, BLOCK.layers(),
            blocks(tokens), Units.formatBytes(BLOCK.blockBytes()), requests, qps, poisson ? "poisson" : "fixed",
            phaseSeconds, transfer.getTotalCount(), dropped, failed, maxSeen);
        out.println("  transfer time (first submit -> last completion), ms: " + LatencyReport.percentiles(transfer, 1e6));
        out.println("  queueing in the client (arrival -> first submit), ms: " +
            LatencyReport.percentiles(queueing, 1e6));
        out.println("  arrival -> last completion, ms: " + LatencyReport.percentiles(total, 1e6));
        final Histogram alone = prompts.transferTimes(true);
        final Histogram overlapped = prompts.transferTimes(false);
        out.printf(Locale.ROOT, "  alone (no other prompt of this client in flight at any moment of its transfer): %d " +
            "of %d, transfer ms: %s%n", alone.getTotalCount(), prompts.count(), LatencyReport.percentiles(alone, 1e6));
        out.printf(Locale.ROOT, "  overlapped (shared the wire with another prompt for part of its transfer): %d, " +
            "transfer ms: %s%n", overlapped.getTotalCount(), LatencyReport.percentiles(overlapped, 1e6));
        final int[] slowest = prompts.slowest(5);
        final StringBuilder line = new StringBuilder("  slowest (arrival number: transfer ms, queued ms, overlapped " +
            "share of its transfer, other prompts beside it, first to last submit ms, trace id):");
        for (final int prompt : slowest)
        {
            line.append(String.format(Locale.ROOT, " #%d: %.1f, %.1f, %.2f, %d, %.1f, %x;", prompts.ordinal(prompt),
                prompts.transferNanos(prompt) / 1e6, prompts.queueNanos(prompt) / 1e6, overlapShare(prompt),
                prompts.others(prompt), prompts.submitSpanNanos(prompt) / 1e6, prompts.traceId(prompt)));
        }
        out.println(line);
        if (dropped > 0)
        {
            out.printf(Locale.ROOT, "kv: NOT KEEPING UP at %.1f QPS of %d tokens: %d of %d arrivals dropped (more than " +
                "%d outstanding); offered %.2f GB/s%n", qps, tokens, dropped, requests, slots.length, qps * bytes / 1e9);
        }
        out.printf(Locale.ROOT, "RESULT mode=kv operation=%s tokens=%d bytes=%d qps=%.2f arrival=%s requests=%d " +
            "completed=%d dropped=%d failed=%d %s mean_ms=%.3f queue_p50_ms=%.3f queue_p99_ms=%.3f total_p50_ms=%.3f total_p99_ms=%.3f " +
            "alone=%d alone_p50_ms=%.3f alone_p99_ms=%.3f alone_max_ms=%.3f overlapped=%d overlapped_p99_ms=%.3f " +
            "slowest_ordinal=%d slowest_overlap=%.2f slowest_submit_span_ms=%.3f slowest_trace=%x%n",
            Opcode.name(opcode).toLowerCase(Locale.ROOT), tokens, bytes, qps, poisson ? "poisson" : "fixed", requests,
            transfer.getTotalCount(), dropped, failed, LatencyReport.percentileFields(transfer, "ms", 1e6),
            transfer.getMean() / 1e6, queueing.getValueAtPercentile(50) / 1e6, queueing.getValueAtPercentile(99) / 1e6,
            total.getValueAtPercentile(50) / 1e6, total.getValueAtPercentile(99) / 1e6, alone.getTotalCount(),
            alone.getValueAtPercentile(50) / 1e6, alone.getValueAtPercentile(99) / 1e6, alone.getMaxValue() / 1e6,
            overlapped.getTotalCount(), overlapped.getValueAtPercentile(99) / 1e6,
            slowest.length == 0 ? 0 : prompts.ordinal(slowest[0]), slowest.length == 0 ? 0 : overlapShare(slowest[0]),
            slowest.length == 0 ? 0 : prompts.submitSpanNanos(slowest[0]) / 1e6,
            slowest.length == 0 ? 0 : prompts.traceId(slowest[0]));
        out.flush();
    }

    private double overlapShare(final int prompt)
    {
        final long transfer = prompts.transferNanos(prompt);
        return transfer <= 0 ? 0 : (double)prompts.overlappedNanos(prompt) / transfer;
    }

    private static long gap(final SplittableRandom random, final double meanGapNs, final boolean poisson)
    {
        return poisson ? (long)(-Math.log(1.0 - random.nextDouble()) * meanGapNs) : (long)meanGapNs;
    }

    private Outstanding freeSlot()
    {
        for (final Outstanding slot : slots)
        {
            if (!slot.inUse)
            {
                return slot;
            }
        }
        return null;
    }

    private int outstanding()
    {
        int count = 0;
        for (final Outstanding slot : slots)
        {
            count += slot.inUse ? 1 : 0;
        }
        return count;
    }

    /**
     * Submit the whole request as one batch, layer by layer, block by block.
     */
    private void start(final Outstanding slot, final int tokens, final long arrival, final int ordinal)
    {
        final int blocks = blocks(tokens);
        final long blockBytes = BLOCK.blockBytes();
        final long traceId = ++nextTraceId;
        slot.tasks = blocks * BLOCK.layers();
        slot.traceId = traceId;
        slot.batch = client.allocateBatch(slot.tasks);
        slot.arrival = arrival;
        slot.ordinal = ordinal;
        slot.inUse = true;
        slot.firstSubmit = System.nanoTime();
        int task = 0;
        for (int layer = 0; layer < BLOCK.layers(); layer++)
        {
            for (int block = 0; block < blocks; block++)
            {
                final long index = (long)layer * maxBlocks + block;
                client.submitTransfer(slot.batch, request.set(opcode, local.address() + index * blockBytes, segment,
                    targetAddress + targetBlock(index) * blockBytes, blockBytes).traceId(traceId));
                slot.submitted[task++] = System.nanoTime();
            }
        }
    }

    /**
     * Record the requests whose tasks all finished.
     */
    private int reap(final Histogram transfer, final Histogram queueing, final Histogram total)
    {
        int work = 0;
        for (final Outstanding slot : slots)
        {
            if (slot.inUse && client.pendingTasks(slot.batch) == 0)
            {
                long end = slot.firstSubmit;
                boolean ok = true;
                for (int task = 0; task < slot.tasks; task++)
                {
                    slot.completed[task] = slot.submitted[task] + client.taskLatencyNanos(slot.batch, task);
                    end = Math.max(end, slot.completed[task]);
                    ok &= client.taskState(slot.batch, task) == TaskStatus.COMPLETED;
                }
                failed += ok ? 0 : 1;
                slot.lastCompleted = end;
                if (slot.ordinal > 0)
                {
                    prompts.record(slot.ordinal, slot.traceId, slot.arrival, slot.firstSubmit,
                        slot.submitted[slot.tasks - 1], end);
                }
                transfer.recordValue(Math.min(LatencyReport.HIGHEST_NANOS, end - slot.firstSubmit));
                queueing.recordValue(Math.min(LatencyReport.HIGHEST_NANOS, Math.max(0, slot.firstSubmit - slot.arrival)));
                total.recordValue(Math.min(LatencyReport.HIGHEST_NANOS, Math.max(0, end - slot.arrival)));
                client.freeBatch(slot.batch);
                slot.inUse = false;
                work++;
            }
            else if (slot.inUse && System.nanoTime() - slot.firstSubmit > AWAIT_TIMEOUT_NS)
            {
                throw new IllegalStateException("a KV request got no completion for " + AWAIT_TIMEOUT_NS / 1e9 + " s");
            }
        }
        return work;
    }

    private long targetBlock(final long index)
    {
        return (targetBlockBase + index) % targetBlocks;
    }

    /**
     * One prompt of {@code tokens}, submitted now and awaited (not recorded): for runs that start prompts of
     * several clients at chosen moments.
     *
     * @return the transfer time (first submit to last completion) in nanoseconds, or -1 when a request failed.
     */
    public long transferOnce(final int tokens)
    {
        largestTokensRun = Math.max(largestTokensRun, tokens);
        final Histogram time = LatencyReport.newHistogram();
        final Outstanding slot = slots[0];
        failed = 0;
        start(slot, tokens, System.nanoTime(), 0);
        while (slot.inUse)
        {
            idle.idle(reap(time, LatencyReport.newHistogram(), LatencyReport.newHistogram()));
        }
        return failed == 0 ? time.getMaxValue() : -1;
    }

    /**
     * @return when the last {@link #transferOnce} submitted its first request ({@link System#nanoTime}).
     */
    public long lastFirstSubmitNanos()
    {
        return slots[0].firstSubmit;
    }

    /**
     * @return when the last {@link #transferOnce}'s last completion was written ({@link System#nanoTime}).
     */
    public long lastCompletedNanos()
    {
        return slots[0].lastCompleted;
    }

    /**
     * @return bytes of the last {@link #transferOnce} whose requests completed within [{@code fromNanos},
     * {@code toNanos}]: how much of this prompt crossed while another one was under way.
     */
    public long bytesCompletedWithin(final long fromNanos, final long toNanos)
    {
        final Outstanding slot = slots[0];
        long blocks = 0;
        for (int task = 0; task < slot.tasks; task++)
        {
            final long at = slot.completed[task];
            if (at - fromNanos >= 0 && toNanos - at >= 0)
            {
                blocks++;
            }
        }
        return blocks * BLOCK.blockBytes();
    }

    /**
     * Before a verified run: fill each local block with the pattern of {@code seed} at the target offset it goes
     * to, so that a WRITE leaves the pattern there (use a seed other than the target's own, which is there already).
     */
    public void fillPattern(final long seed)
    {
        final long blockBytes = BLOCK.blockBytes();
        final long localBlocks = local.length() / blockBytes;
        for (long index = 0; index < localBlocks; index++)
        {
            BenchPattern.fill(local.segment().asSlice(index * blockBytes, blockBytes), seed,
                targetBlock(index) * blockBytes);
        }
    }

    /**
     * After the run, check every block the largest prompt run moved: a WRITE's target blocks are read back into
     * {@code spare} (at least {@link #VERIFY_BLOCKS} blocks) and compared with the pattern of {@code seed}; a READ's
     * local blocks are compared with it directly.
     *
     * @return the number of blocks checked, or a negative number: -(1 + the first block that differs or failed).
     */
    public long verify(final long seed, final SharedBuffer spare)
    {
        final long blockBytes = BLOCK.blockBytes();
        final int blocks = blocks(largestTokensRun);
        long checked = 0;
        for (int layer = 0; layer < BLOCK.layers(); layer++)
        {
            for (int first = 0; first < blocks; first += VERIFY_BLOCKS)
            {
                final int count = Math.min(VERIFY_BLOCKS, blocks - first);
                final long firstIndex = (long)layer * maxBlocks + first;
                if (opcode == Opcode.WRITE && !readBack(firstIndex, count, spare))
                {
                    return -(1 + firstIndex);
                }
                for (int i = 0; i < count; i++)
                {
                    final long index = firstIndex + i;
                    final MemorySegment bytes = opcode == Opcode.WRITE ?
                        spare.segment().asSlice(i * blockBytes, blockBytes) :
                        local.segment().asSlice(index * blockBytes, blockBytes);
                    if (BenchPattern.firstMismatch(bytes, seed, targetBlock(index) * blockBytes) >= 0)
                    {
                        return -(1 + index);
                    }
                    checked++;
                }
            }
        }
        return checked;
    }

    private boolean readBack(final long firstIndex, final int count, final SharedBuffer spare)
    {
        final long blockBytes = BLOCK.blockBytes();
        spare.segment().asSlice(0, count * blockBytes).fill((byte)0);
        final long batch = client.allocateBatch(count);
        for (int i = 0; i < count; i++)
        {
            client.submitTransfer(batch, request.set(Opcode.READ, spare.address() + i * blockBytes, segment,
                targetAddress + targetBlock(firstIndex + i) * blockBytes, blockBytes));
        }
        boolean ok = client.awaitBatch(batch, VERIFY_TIMEOUT_MS);
        for (int i = 0; ok && i < count; i++)
        {
            ok = client.taskState(batch, i) == TaskStatus.COMPLETED;
        }
        client.freeBatch(batch);
        return ok;
    }

    public XferClient client()
    {
        return client;
    }

    public static long blockBytes()
    {
        return BLOCK.blockBytes();
    }

    /**
     * @return bytes of the spare buffer {@link #verify} needs.
     */
    public static long verifyBytes()
    {
        return (long)VERIFY_BLOCKS * BLOCK.blockBytes();
    }
}
