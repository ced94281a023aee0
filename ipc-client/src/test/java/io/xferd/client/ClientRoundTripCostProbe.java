package io.xferd.client;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A probe, not part of the suite (run it with {@code -Dtest=ClientRoundTripCostProbe}): what the CLIENT's side of a
 * lone 64 B round trip costs, on one thread, through {@link XferClient}'s public calls as
 * {@code RoundTripBenchmark} makes them (allocateBatch, submitTransfer, spin on pendingTasks, taskState, freeBatch),
 * with a {@link FakeDaemon} answering the request between the submit and the first poll; and what one empty poll
 * costs (the step of a caller spinning on its completion). Prints the thread's CPU time per operation and the bytes
 * it allocated (0 once compiled). The fake daemon's answer is the same work in every build, so two builds' figures
 * differ by the client's own cost: run it on each, alternated.
 */
class ClientRoundTripCostProbe
{
    private static final int ROUND_TRIPS = 1_000_000;
    private static final int EMPTY_POLLS = 4_000_000;
    private static final int ROUNDS = 8;

    @TempDir
    Path directory;

    @Test
    void printCpuNanosPerRoundTrip()
    {
        final CachedEpochClock epochClock = new CachedEpochClock();
        epochClock.update(ClientParts.START_MS); // the fake daemon's heartbeat stays fresh
        try (FakeDaemon daemon = new FakeDaemon(directory, ClientParts.START_MS);
            XferClient client = daemon.connectClient(new ClientContext().segmentName("probe").epochClock(epochClock)
                .controlTimeoutMs(FakeDaemon.CONTROL_TIMEOUT_MS), 16, 8))
        {
            final TransferRequest request = new TransferRequest().set(Opcode.WRITE, 0x1000, 0x5E6L, 0x2000, 64);
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            long sink = 0;
            for (int round = 0; round < ROUNDS; round++)
            {
                long cpuStart = threads.getCurrentThreadCpuTime();
                long allocatedStart = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < ROUND_TRIPS; i++)
                {
                    final long batch = client.allocateBatch(1);
                    client.submitTransfer(batch, request);
                    daemon.answerSubmits(TransferStatus.OK);
                    while (client.pendingTasks(batch) > 0)
                    {
                        Thread.onSpinWait();
                    }
                    sink += client.taskState(batch, 0);
                    client.freeBatch(batch);
                }
                System.out.printf("PROBE client round %d: %.1f CPU ns per round trip (fake daemon's answer " +
                    "included), %d B allocated%n", round, (threads.getCurrentThreadCpuTime() - cpuStart) /
                    (double)ROUND_TRIPS, threads.getCurrentThreadAllocatedBytes() - allocatedStart);

                final long batch = client.allocateBatch(1);
                client.submitTransfer(batch, request);
                cpuStart = threads.getCurrentThreadCpuTime();
                allocatedStart = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < EMPTY_POLLS; i++)
                {
                    sink += client.pendingTasks(batch);
                }
                System.out.printf("PROBE client round %d: %.1f CPU ns per empty poll, %d B allocated%n", round,
                    (threads.getCurrentThreadCpuTime() - cpuStart) / (double)EMPTY_POLLS,
                    threads.getCurrentThreadAllocatedBytes() - allocatedStart);
                daemon.answerSubmits(TransferStatus.OK);
                while (client.pendingTasks(batch) > 0)
                {
                    Thread.onSpinWait();
                }
                client.freeBatch(batch);
            }
            assertThat(sink).isPositive();
        }
    }
}
