package io.xferd.daemon.tools.demo;

import io.xferd.client.ClientContext;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import org.HdrHistogram.Histogram;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The prefill side of the demo (the KV producer): fills its KV cache with seeded random data, then pushes
 * every 16-token block of every layer into the consumer's cache with WRITEs in batches, the last block of each
 * layer carrying a notification. Prints throughput and submit-to-completion latency percentiles.
 * <p>
 * Arguments: directory segment-name target-segment layers blocks seed batch-size passes warm-up-ms address...
 * <p>
 * The cache is pushed {@code passes - 1} times first, and more while passes still get faster, up to
 * {@code warm-up-ms} ({@link WarmUp}), to warm up the JIT of all three processes (same bytes, reported but not
 * counted); then once more, timed: a short-lived demo otherwise measures the compilers, not the transfer path.
 * Warm-up passes notify as the timed pass does ("warm-up layer N" where it sends "layer N", which is all the consumer
 * waits for): a warm-up without them left the notify paths of the producer's submit and the daemon's intake out of
 * the compiled code, and the timed pass's first notification sent both back to the interpreter (deoptimized
 * mid-pass: the timed pass ran at about half the speed of the warm-up passes before it).
 */
public final class PrefillProducer
{
    /** Batches whose completions make one stretch of the steady figure (8 MiB at the default 32 x 32 KiB). */
    static final int STRETCH_BATCHES = 8;

    /**
     * One push of the whole cache: first submit to last completion, the requests that failed, and the median GB/s
     * of its stretches of {@link #STRETCH_BATCHES} batch completions (0 when the pass has fewer than two stretches).
     */
    private record Pass(long elapsedNanos, int failed, double steadyGbps)
    {
    }

    public static void main(final String[] args)
    {
        final Path directory = Path.of(args[0]);
        final String name = args[1];
        final String target = args[2];
        final int layers = Integer.parseInt(args[3]);
        final KvCacheLayout layout = KvCacheLayout.qwen25_7b(Integer.parseInt(args[4]));
        final long seed = Long.parseLong(args[5]);
        final int batchSize = Integer.parseInt(args[6]);
        final int passes = Integer.parseInt(args[7]);
        final long warmUpMs = Long.parseLong(args[8]);
        final long[] targetLayers = new long[layers];
        for (int i = 0; i < layers; i++)
        {
            targetLayers[i] = Long.parseLong(args[9 + i]);
        }
        final byte[][] layerDone = notifications(layers, "layer ");
        final byte[][] warmUpLayerDone = notifications(layers, "warm-up layer ");

        try (XferClient client = XferClient.connect(new ClientContext().directory(directory).segmentName(name)))
        {
            final SharedBuffer[] cache = new SharedBuffer[layers];
            for (int layer = 0; layer < layers; layer++)
            {
                cache[layer] = client.allocateMemory(layout.layerBytes());
                KvCacheLayout.fill(cache[layer].segment(), seed, layer);
                client.registerMemory(cache[layer], "cpu:0");
            }
            final long segment = client.openSegment(target);
            final Histogram latency = new Histogram(3_600_000_000_000L, 3);
            final long blockBytes = layout.blockBytes();
            final int[] failed = new int[1];
            final List<Double> passGbps = new ArrayList<>();

            final WarmUp.Outcome warmUp = new WarmUp(passes - 1, warmUpMs * 1_000_000L, System::nanoTime)
                .run(pass ->
                {
                    final Pass warm = push(client, cache, segment, targetLayers, layout, batchSize, warmUpLayerDone,
                        new Histogram(3_600_000_000_000L, 3));
                    failed[0] += warm.failed();
                    final double gbps = layout.totalBytes() / (double)warm.elapsedNanos();
                    passGbps.add(gbps);
                    System.out.printf("WARM-UP pass %d: %.2f GB/s (steady %.2f)%n", pass, gbps, warm.steadyGbps());
                    return gbps;
                });
            if (warmUp.passes() > 0)
            {
                System.out.printf("WARMED UP: %d pass%s in %.1f s, best %.2f GB/s; ended by %s%n", warmUp.passes(),
                    warmUp.passes() == 1 ? "" : "es", warmUp.elapsedNanos() / 1e9, warmUp.bestGbps(),
                    warmUp.end().reason());
            }
            final Pass timed = push(client, cache, segment, targetLayers, layout, batchSize, layerDone, latency);
            failed[0] += timed.failed();
            final double gbps = layout.totalBytes() / (double)timed.elapsedNanos();
            passGbps.add(gbps);
            System.out.printf("MOVED %d bytes in %d requests of %d bytes: %.2f GB/s (%s)%n",
                layout.totalBytes(), latency.getTotalCount(), blockBytes, gbps,
                warmUp.passes() > 0 ? "one timed pass, after warm-up" : "one pass, cold: no warm-up");
            // one pass is ~0.1 s at the target: a scheduler stall of a few ms on a shared VM moves it by half
            final double[] afterFirst = passGbps.subList(Math.min(1, passGbps.size() - 1), passGbps.size()).stream()
                .mapToDouble(Double::doubleValue).toArray();
            System.out.printf("STEADY %.2f GB/s: the median of the timed pass's stretches of %d batches " +
                "(%d MiB), which a stall of the machine moves little; passes after the first: median %.2f GB/s%n",
                timed.steadyGbps(), STRETCH_BATCHES, STRETCH_BATCHES * batchSize * blockBytes >> 20,
                median(afterFirst));
            System.out.printf("LATENCY submit->completion us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f%n",
                latency.getValueAtPercentile(50) / 1e3, latency.getValueAtPercentile(90) / 1e3,
                latency.getValueAtPercentile(99) / 1e3, latency.getValueAtPercentile(99.9) / 1e3,
                latency.getMaxValue() / 1e3);
            System.out.println(failed[0] == 0 ? "SENT" : "FAILED " + failed[0] + " request(s)");
            System.out.flush();
            System.exit(failed[0] == 0 ? 0 : 1);
        }
    }

    /**
     * Push every block of every layer once, keeping a few batches in flight as a connector pushing layer after
     * layer would; the last block of each layer carries that layer's notification.
     *
     * @return nanoseconds from the first submit to the last completion, and the requests that failed.
     */
    private static Pass push(final XferClient client, final SharedBuffer[] cache, final long segment,
        final long[] targetLayers, final KvCacheLayout layout, final int batchSize, final byte[][] notifications,
        final Histogram latency)
    {
        final TransferRequest request = new TransferRequest();
        final long blockBytes = layout.blockBytes();
        final int layers = cache.length;
        final int window = 4;
        final long[] inFlight = new long[window];
        final int[] inFlightCount = new int[window];
        final int batchesPerLayer = (layout.blocks() + batchSize - 1) / batchSize;
        final long[] doneNanos = new long[layers * batchesPerLayer];
        final long[] doneBytes = new long[layers * batchesPerLayer]; // moved up to and with each completion
        long moved = 0;
        int finished = 0;
        int submittedBatches = 0;
        int failed = 0;
        final long start = System.nanoTime();
        for (int layer = 0; layer < layers; layer++)
        {
            for (int first = 0; first < layout.blocks(); first += batchSize)
            {
                final int slot = submittedBatches % window;
                if (submittedBatches >= window)
                {
                    failed += finish(client, inFlight[slot], inFlightCount[slot], latency);
                    moved += inFlightCount[slot] * blockBytes;
                    doneBytes[finished] = moved;
                    doneNanos[finished++] = System.nanoTime();
                }
                final int count = Math.min(batchSize, layout.blocks() - first);
                final long batch = client.allocateBatch(count);
                for (int i = 0; i < count; i++)
                {
                    final int block = first + i;
                    request.set(Opcode.WRITE, cache[layer].address() + block * blockBytes, segment,
                        targetLayers[layer] + block * blockBytes, blockBytes);
                    if (block == layout.blocks() - 1)
                    {
                        request.notify(notifications[layer]);
                    }
                    client.submitTransfer(batch, request);
                }
                inFlight[slot] = batch;
                inFlightCount[slot] = count;
                submittedBatches++;
            }
        }
        for (int i = Math.max(0, submittedBatches - window); i < submittedBatches; i++)
        {
            failed += finish(client, inFlight[i % window], inFlightCount[i % window], latency);
            moved += inFlightCount[i % window] * blockBytes;
            doneBytes[finished] = moved;
            doneNanos[finished++] = System.nanoTime();
        }
        return new Pass(System.nanoTime() - start, failed, steadyGbps(doneNanos, doneBytes, finished));
    }

    /**
     * @param doneNanos when each batch completion was seen, in order.
     * @param doneBytes the bytes moved up to and with each completion.
     * @return the median GB/s over consecutive stretches of {@link #STRETCH_BATCHES} batch completions, 0 when there
     * are fewer than two stretches.
     */
    static double steadyGbps(final long[] doneNanos, final long[] doneBytes, final int batches)
    {
        final int stretches = (batches - 1) / STRETCH_BATCHES;
        if (stretches < 2)
        {
            return 0;
        }
        final double[] gbps = new double[stretches];
        for (int i = 0; i < stretches; i++)
        {
            final int from = i * STRETCH_BATCHES;
            final int to = from + STRETCH_BATCHES;
            gbps[i] = (doneBytes[to] - doneBytes[from]) / (double)Math.max(1, doneNanos[to] - doneNanos[from]);
        }
        return median(gbps);
    }

    private static byte[][] notifications(final int layers, final String prefix)
    {
        final byte[][] messages = new byte[layers][];
        for (int layer = 0; layer < layers; layer++)
        {
            messages[layer] = (prefix + layer).getBytes(StandardCharsets.UTF_8);
        }
        return messages;
    }

    static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static int finish(final XferClient client, final long batch, final int count, final Histogram latency)
    {
        int failed = 0;
        client.awaitBatch(batch, 30_000);
        for (int i = 0; i < count; i++)
        {
            if (client.taskState(batch, i) != TaskStatus.COMPLETED)
            {
                failed++;
            }
            latency.recordValue(Math.max(0, client.taskLatencyNanos(batch, i)));
        }
        client.freeBatch(batch);
        return failed;
    }
}
