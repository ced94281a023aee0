package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.journal.TransferJournal;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.AccessPolicy;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A probe, not part of the suite (its name does not end in Test; run it with {@code -Dtest=PassCostProbe}): the CPU
 * time one thread spends per 4 KiB local WRITE going through intake and a transfer worker, batches of 32 SUBMIT
 * records written into a client's ring as the client library does, completions read back, the real clock. CPU time
 * of the thread, not wall time, so that a loaded machine changes the figure little (its caches still do). The file
 * copies unchanged into an older checkout, for a before/after on the same machine in the same minutes.
 */
class PassCostProbe
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x20_0000L;
    private static final int BLOCK = 4096;
    private static final int BATCH = 32;

    @Test
    void printCpuNanosPerRequest()
    {
        try (Arena arena = Arena.ofShared())
        {
            final CountersManager countersManager = new CountersManager(
                new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)),
                new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
            final SystemCounters counters = new SystemCounters(countersManager);
            final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
            final SessionTable registry = new SessionTable(4);
            final TransferPipeline pipeline = new TransferPipeline(1024, 1);
            final TestClient client = new TestClient(0, "probe", 64 * 1024);
            final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
                SystemNanoClock.INSTANCE, TransferJournal.DISABLED, 64, 4);
            final TransferWorker worker = new TransferWorker(0, pipeline, registry,
                new CompletionSender(disconnects, counters), null, counters, SystemNanoClock.INSTANCE, 1 << 20,
                Long.MAX_VALUE, TransferJournal.DISABLED, new RegionCopierTest.RecordingDeviceMemory(),
                AccessPolicy.OWNER_ONLY);
            final MemorySegment source = arena.allocate((long)BLOCK * BATCH);
            final MemorySegment target = arena.allocate((long)BLOCK * BATCH);
            source.fill((byte)7);
            client.regions(new Region(LOCAL, source.byteSize(), "cpu:0", source, source),
                new Region(TARGET, target.byteSize(), "cpu:0", target, target));
            registry.add(client.session);
            final UnsafeBuffer record = new UnsafeBuffer(ByteBuffer.allocateDirect(256));
            final SubmitRequestFlyweight request = new SubmitRequestFlyweight().wrap(record, 0);
            final int recordLength = SubmitRequestFlyweight.recordLength(0);
            final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            final long[] completions = new long[1];

            for (int round = 0; round < 7; round++)
            {
                final int batches = 20_000;
                final long cpuStart = threads.getCurrentThreadCpuTime();
                for (int b = 0; b < batches; b++)
                {
                    for (int i = 0; i < BATCH; i++)
                    {
                        request.clearReserved().opcode(Opcode.WRITE).requestId(i)
                            .segmentHandle(client.session.segmentHandle()).localAddress(LOCAL + (long)i * BLOCK)
                            .targetAddress(TARGET + (long)i * BLOCK).length(BLOCK).traceId(0)
                            .submitNanos(System.nanoTime()).noNotify();
                        client.submitter.write(RecordTypes.SUBMIT, record, 0, recordLength);
                    }
                    while (intake.doWork() > 0)
                    {
                        worker.doWork();
                    }
                    worker.doWork();
                    client.session.completionRing().read((type, buffer, index, length) -> completions[0]++);
                }
                final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                System.out.printf("PROBE round %d: %.1f CPU ns per 4 KiB request (client ring work included)%n",
                    round, cpu / (double)(batches * BATCH));
            }
            assertThat(completions[0]).isEqualTo(7L * 20_000 * BATCH);
            assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isZero();
        }
    }
}
