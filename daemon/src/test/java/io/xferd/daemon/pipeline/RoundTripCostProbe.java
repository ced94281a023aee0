package io.xferd.daemon.pipeline;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
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
import org.agrona.concurrent.MessageHandler;
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
 * threading), the completion read back. Two data planes side by side, one sending the request through the pipeline
 * and one running it inline (SHARED threading's default), their rounds alternated so that a loaded machine's drift
 * falls on both; with the journal off and on (a real recorder drained on the same thread by the journal's agent).
 * Prints the thread's CPU time per round trip (the client's ring work included) and the bytes it allocated per round
 * (0 once compiled: the hot path allocates nothing).
 */
class RoundTripCostProbe
{
    private static final long LOCAL = 0x10_0000L;
    private static final long TARGET = 0x20_0000L;
    private static final int LENGTH = 64;
    private static final int REQUESTS = 400_000;
    private static final int ROUNDS = 8;

    @Test
    void printCpuNanosPerRoundTrip()
    {
        for (final boolean journalOn : new boolean[] {false, true})
        {
            try (Arena arena = Arena.ofShared())
            {
                final DataPlane pipeline = new DataPlane(arena, journalOn, false);
                final DataPlane inline = new DataPlane(arena, journalOn, true);
                final com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
                for (int round = 0; round < ROUNDS; round++)
                {
                    for (final DataPlane plane : new DataPlane[] {pipeline, inline})
                    {
                        final long cpuStart = threads.getCurrentThreadCpuTime();
                        final long allocatedStart = threads.getCurrentThreadAllocatedBytes();
                        plane.roundTrips(REQUESTS);
                        final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                        final long allocated = threads.getCurrentThreadAllocatedBytes() - allocatedStart;
                        System.out.printf("PROBE %s round %d: %.1f CPU ns per 64 B round trip, %d B allocated " +
                            "in the round%n", plane.name, round, cpu / (double)REQUESTS, allocated);
                    }
                }
                for (final DataPlane plane : new DataPlane[] {pipeline, inline})
                {
                    assertThat(plane.completions[0]).isEqualTo((long)ROUNDS * REQUESTS);
                    assertThat(plane.counters.get(SystemCounter.REQUESTS_FAILED).get()).isZero();
                    assertThat(plane.counters.get(SystemCounter.REQUESTS_COMPLETED).get())
                        .isEqualTo((long)ROUNDS * REQUESTS);
                }
            }
        }
    }

    /**
     * One client, intake and a worker as one composite agent, and (journal on) the journal's agent.
     */
    private static final class DataPlane
    {
        final String name;
        final SystemCounters counters = new SystemCounters(new CountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)),
            new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
        final TestClient client = new TestClient(0, "probe", 64 * 1024);
        final CompositeAgent agent;
        final JournalAgent journalAgent;
        final UnsafeBuffer record = new UnsafeBuffer(ByteBuffer.allocateDirect(256));
        final SubmitRequestFlyweight request = new SubmitRequestFlyweight().wrap(record, 0);
        final long[] completions = new long[1];
        final MessageHandler countCompletion = (type, buffer, index, length) -> completions[0]++;

        DataPlane(final Arena arena, final boolean journalOn, final boolean inline)
        {
            name = (journalOn ? "journal on" : "journal off") + (inline ? ", inline" : ", pipeline");
            final JournalRecorder recorder = journalOn ? new JournalRecorder(2 * 1024 * 1024,
                counters.get(SystemCounter.JOURNAL_DROPPED), new JournalNames()) : null;
            final TransferJournal journal = journalOn ? recorder : TransferJournal.DISABLED;
            journalAgent = journalOn ? new JournalAgent(recorder, null, 0, new TransferStats(), -1) : null;
            final ManyToOneConcurrentArrayQueue<ClientSession> disconnects = new ManyToOneConcurrentArrayQueue<>(8);
            // as many slots as the daemon has by default: intake's pass looks at the slots in use
            final SessionTable registry = new SessionTable(new DaemonContext().maxClients());
            final TransferPipeline pipeline = new TransferPipeline(1024, 1);
            final TransferWorker worker = new TransferWorker(0, pipeline, registry,
                new CompletionSender(disconnects, counters), null, counters, SystemNanoClock.INSTANCE, 1 << 20,
                Long.MAX_VALUE, journal, new RegionCopierTest.RecordingDeviceMemory(), AccessPolicy.OWNER_ONLY);
            final SubmitAdapter intake = new SubmitAdapter(pipeline.ring(), registry, disconnects, counters,
                SystemNanoClock.INSTANCE, journal, 64, 4, 0, inline ? worker : null);
            agent = new CompositeAgent(intake, worker);
            final MemorySegment memory = arena.allocate(8192);
            memory.fill((byte)7);
            client.regions(new Region(LOCAL, 4096, "cpu:0", memory.asSlice(0, 4096), memory.asSlice(0, 4096)),
                new Region(TARGET, 4096, "cpu:0", memory.asSlice(4096, 4096), memory.asSlice(4096, 4096)));
            registry.add(client.session);
        }

        void roundTrips(final int requests)
        {
            final int recordLength = SubmitRequestFlyweight.recordLength(0);
            for (int r = 0; r < requests; r++)
            {
                request.clearReserved().opcode(Opcode.WRITE).requestId(r)
                    .segmentHandle(client.session.segmentHandle())
                    .localAddress(LOCAL).targetAddress(TARGET).length(LENGTH).traceId(0)
                    .submitNanos(System.nanoTime()).noNotify();
                client.submitter.write(RecordTypes.SUBMIT, record, 0, recordLength);
                try
                {
                    agent.doWork();
                }
                catch (final Exception ex)
                {
                    throw new AssertionError(ex);
                }
                client.session.completionRing().read(countCompletion);
                if (journalAgent != null)
                {
                    journalAgent.doWork();
                }
            }
        }
    }
}
