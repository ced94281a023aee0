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
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A probe, not part of the suite (run it with {@code -Dtest=RoundTripCostProbe}): what one lone 64 B local WRITE
 * costs the data plane, the daemon's side of the round trip, on one thread: a SUBMIT record written into a client's
 * ring, one duty cycle of the data plane (intake and a transfer worker in one composite agent, as in SHARED
 * threading), the completion read back; through the pipeline, and run inline by intake (SHARED threading's
 * default since the inline path). CPU time of the thread per request, with the journal off and on (a real
 * recorder drained on the same thread by the journal's agent), so a loaded machine changes the figure little; and
 * the bytes the thread allocated in each round (0 once compiled: the hot path allocates nothing).
 */
class RoundTripCostProbe
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x20_0000L;
    private static final int LENGTH = 64;

    @Test
    void printCpuNanosPerRoundTrip() throws Exception
    {
        for (final boolean journalOn : new boolean[] {false, true})
        {
            for (final boolean inline : new boolean[] {false, true})
            {
                probe(journalOn, inline);
            }
        }
    }

    private static void probe(final boolean journalOn, final boolean inline) throws Exception
    {
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
            final TransferPipeline pipeline = new TransferPipeline(1024, 1);
            final TestClient client = new TestClient(0, "probe", 64 * 1024);
            final TransferWorker worker = new TransferWorker(0, pipeline, registry,
                new CompletionSender(disconnects, counters), null, counters, SystemNanoClock.INSTANCE, 1 << 20,
                Long.MAX_VALUE, journal, new RegionCopierTest.RecordingDeviceMemory(),
                AccessPolicy.OWNER_ONLY);
            final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
                SystemNanoClock.INSTANCE, journal, 64, 4, 0, inline ? worker : null);
            final CompositeAgent dataPlane = new CompositeAgent(intake, worker);
            final MemorySegment memory = arena.allocate(8192);
            memory.fill((byte)7);
            client.regions(new Region(LOCAL, 4096, "cpu:0", memory.asSlice(0, 4096), memory.asSlice(0, 4096)),
                new Region(TARGET, 4096, "cpu:0", memory.asSlice(4096, 4096), memory.asSlice(4096, 4096)));
            registry.add(client.session);
            final UnsafeBuffer record = new UnsafeBuffer(ByteBuffer.allocateDirect(256));
            final SubmitRequestFlyweight request = new SubmitRequestFlyweight().wrap(record, 0);
            final int recordLength = SubmitRequestFlyweight.recordLength(0);
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final long[] completions = new long[1];
            final org.agrona.concurrent.MessageHandler countCompletion =
                (type, buffer, index, length) -> completions[0]++; // made once: the loop allocates nothing
            final String name = (journalOn ? "journal on" : "journal off") + (inline ? ", inline" : ", pipeline");
            final int requests = 400_000;
            for (int round = 0; round < 7; round++)
            {
                long dataPlaneNanos = 0;
                final long cpuStart = threads.getCurrentThreadCpuTime();
                final long allocatedStart = threads.getCurrentThreadAllocatedBytes();
                for (int r = 0; r < requests; r++)
                {
                    request.clearReserved().opcode(Opcode.WRITE).requestId(r)
                        .segmentHandle(client.session.segmentHandle())
                        .localAddress(LOCAL).targetAddress(TARGET).length(LENGTH).traceId(0)
                        .submitNanos(System.nanoTime()).noNotify();
                    client.submitter.write(RecordTypes.SUBMIT, record, 0, recordLength);
                    final long start = System.nanoTime();
                    dataPlane.doWork();
                    dataPlaneNanos += System.nanoTime() - start;
                    client.session.completionRing().read(countCompletion);
                    if (journalOn)
                    {
                        journalAgent.doWork();
                    }
                }
                final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                final long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedStart;
                System.out.printf("PROBE %s round %d: %.1f CPU ns per 64 B round trip, data plane's duty cycle " +
                    "%.1f ns, %d B allocated in the round%n", name, round, cpu / (double)requests,
                    dataPlaneNanos / (double)requests, allocated);
            }
            assertThat(completions[0]).isEqualTo(7L * requests);
            assertThat(counters.get(SystemCounter.REQUESTS_FAILED).get()).isZero();
        }
    }
}
