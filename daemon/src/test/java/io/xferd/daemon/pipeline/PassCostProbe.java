package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.JournalAgent;
import io.xferd.daemon.journal.JournalNames;
import io.xferd.daemon.journal.JournalRecorder;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.journal.TransferStats;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.AccessPolicy;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A probe, not part of the suite (its name does not end in Test; run it with {@code -Dtest=PassCostProbe}): the CPU
 * time one thread spends per 4 KiB local WRITE going through intake and a transfer worker, batches of 32 SUBMIT
 * records written into a client's ring as the client library does, completions read back, the real clock. CPU time
 * of the thread, not wall time, so that a loaded machine changes the figure little (its caches still do). The file
 * copies unchanged into an older checkout, for a before/after on the same machine in the same minutes.
 * <p>
 * Eight sets of rounds: "requests" (32 SUBMIT records, one completion each) and "batch" (one SUBMIT_BATCH record of
 * 32 entries, one completion), each also "-scattered" (requests that do not follow each other in the target: no
 * span of a local run can be copied in one) and each with the journal off and on ("+journal": a real recorder, drained on the same
 * thread by the journal's agent into the metrics' statistics, without a queue on disk: the CPU the journal's thread
 * spends per request beside the data plane's, less the Chronicle append).
 */
class PassCostProbe
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x20_0000L;
    /** The request size: 4 KiB; {@code -Dxferd.probe.block=64} leaves the copy out of the figure (what is not copying). */
    private static final int BLOCK = Integer.getInteger("xferd.probe.block", 4096);
    private static final int BATCH = 32;
    /**
     * {@code -Dxferd.probe.shared=true}: intake and the worker as the daemon's SHARED threading lays them (the
     * default, and the JMH's in-process daemon): intake may run work inline on the worker. {@code
     * -Dxferd.probe.pipeline}: the pipeline's slots (the daemon's default is 4096).
     */
    private static final boolean SHARED = Boolean.getBoolean("xferd.probe.shared");

    /**
     * {@code -Dxferd.probe.pipelines=64,4096}: instead of the eight sets, "requests" and "batch" over each of these
     * pipeline sizes in turn, four times, in this one JVM (between JVMs the same code swings 2x), and the median of
     * rounds 2-6 of each size and mode over the four turns.
     */
    private static final String PIPELINES = System.getProperty("xferd.probe.pipelines");

    @Test
    void printCpuNanosPerRequest()
    {
        if (PIPELINES != null)
        {
            alternatePipelineSizes(Arrays.stream(PIPELINES.split(",")).mapToInt(Integer::parseInt).toArray());
            return;
        }
        for (final boolean journalOn : new boolean[] {false, true})
        {
            for (final boolean oneRecord : new boolean[] {false, true})
            {
                probe(oneRecord, journalOn, false);
                probe(oneRecord, journalOn, true);
            }
        }
    }

    private static void alternatePipelineSizes(final int[] sizes)
    {
        final Map<String, List<Double>> figures = new TreeMap<>();
        for (int turn = 0; turn < 4; turn++)
        {
            for (final boolean oneRecord : new boolean[] {false, true})
            {
                for (final int size : sizes)
                {
                    final double[] rounds = probe(oneRecord, false, false, size);
                    final List<Double> list = figures.computeIfAbsent(
                        (oneRecord ? "batch" : "requests") + " pipeline " + size, k -> new ArrayList<>());
                    for (int round = 2; round < rounds.length; round++)
                    {
                        list.add(rounds[round]);
                    }
                }
            }
        }
        figures.forEach((name, values) ->
        {
            final double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf("PROBE SUMMARY %s: median %.1f CPU ns per %d B request (%d rounds, min %.1f)%n",
                name, sorted[sorted.length / 2], BLOCK, sorted.length, sorted[0]);
        });
    }

    private static double[] probe(final boolean oneRecord, final boolean journalOn, final boolean scattered)
    {
        return probe(oneRecord, journalOn, scattered, Integer.getInteger("xferd.probe.pipeline", 1024));
    }

    /**
     * @param scattered request i goes to block 31 - i of the target, so no two entries follow each other in both
     *                  memories (the adjacent layout, request i to block i, lets the worker copy a run in one span).
     */
    private static double[] probe(final boolean oneRecord, final boolean journalOn, final boolean scattered,
        final int pipelineSize)
    {
        final double[] figures = new double[7];
        try (Arena arena = Arena.ofShared())
        {
            final CountersManager countersManager = new CountersManager(
                new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)),
                new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
            final SystemCounters counters = new SystemCounters(countersManager);
            final JournalRecorder recorder = journalOn ?
                new JournalRecorder(2 * 1024 * 1024, counters.get(SystemCounter.JOURNAL_DROPPED), new JournalNames()) :
                null;
            final TransferJournal journal = journalOn ? recorder : TransferJournal.DISABLED;
            final JournalAgent journalAgent = journalOn ?
                new JournalAgent(recorder, null, 0, new TransferStats(), -1) : null;
            final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
            final SessionTable registry = new SessionTable(4);
            final TransferPipeline pipeline = new TransferPipeline(pipelineSize, 1);
            final TestClient client = new TestClient(0, "probe", 64 * 1024);
            final TransferWorker worker = new TransferWorker(0, pipeline, registry,
                new CompletionSender(disconnects, counters), null, counters, SystemNanoClock.INSTANCE, 1 << 20,
                Long.MAX_VALUE, journal, new RegionCopierTest.RecordingDeviceMemory(),
                AccessPolicy.OWNER_ONLY);
            final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
                SystemNanoClock.INSTANCE, journal, 64, 4, 0, SHARED ? worker : null);
            final MemorySegment source = arena.allocate((long)BLOCK * BATCH);
            final MemorySegment target = arena.allocate((long)BLOCK * BATCH);
            source.fill((byte)7);
            client.regions(new Region(LOCAL, source.byteSize(), "cpu:0", source, source),
                new Region(TARGET, target.byteSize(), "cpu:0", target, target));
            registry.add(client.session);
            final UnsafeBuffer record = new UnsafeBuffer(ByteBuffer.allocateDirect(2048));
            final SubmitRequestFlyweight request = new SubmitRequestFlyweight().wrap(record, 0);
            final SubmitBatchFlyweight batchRecord = new SubmitBatchFlyweight().wrap(record, 0);
            final int recordLength = SubmitRequestFlyweight.recordLength(0);
            final int batchLength = SubmitBatchFlyweight.bodyLength(BATCH, 0);
            final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            final long[] completions = new long[1];
            final String name = (oneRecord ? "batch" : "requests") + (scattered ? "-scattered" : "") +
                (journalOn ? "+journal" : "");
            final int last = BATCH - 1;

            for (int round = 0; round < 7; round++)
            {
                final int batches = 20_000;
                final long cpuStart = threads.getCurrentThreadCpuTime();
                for (int b = 0; b < batches; b++)
                {
                    if (oneRecord)
                    {
                        batchRecord.header(b, Opcode.WRITE, BATCH, client.session.segmentHandle(), 0,
                            System.nanoTime(), null, 0, 0);
                        for (int i = 0; i < BATCH; i++)
                        {
                            batchRecord.entry(i, LOCAL + (long)i * BLOCK,
                                TARGET + (long)(scattered ? last - i : i) * BLOCK, BLOCK);
                        }
                        client.submitter.write(RecordTypes.SUBMIT_BATCH, record, 0, batchLength);
                    }
                    else
                    {
                        for (int i = 0; i < BATCH; i++)
                        {
                            request.clearReserved().opcode(Opcode.WRITE).requestId(i)
                                .segmentHandle(client.session.segmentHandle())
                                .localAddress(LOCAL + (long)i * BLOCK)
                                .targetAddress(TARGET + (long)(scattered ? last - i : i) * BLOCK)
                                .length(BLOCK).traceId(0).submitNanos(System.nanoTime()).noNotify();
                            client.submitter.write(RecordTypes.SUBMIT, record, 0, recordLength);
                        }
                    }
                    while (intake.doWork() > 0)
                    {
                        worker.doWork();
                    }
                    worker.doWork();
                    client.session.completionRing().read((type, buffer, index, length) -> completions[0]++);
                    if (journalOn)
                    {
                        journalAgent.doWork();
                    }
                }
                final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                figures[round] = cpu / (double)(batches * BATCH);
                System.out.printf("PROBE %s pipeline %d round %d: %.1f CPU ns per %d B request (client ring work " +
                    "included)%n", name, pipelineSize, round, figures[round], BLOCK);
            }
            assertThat(completions[0]).isEqualTo(7L * 20_000 * (oneRecord ? 1 : BATCH));
            assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isZero();
            assertThat(counters.get(SystemCounter.JOURNAL_DROPPED).get()).isZero();
        }
        return figures;
    }
}
