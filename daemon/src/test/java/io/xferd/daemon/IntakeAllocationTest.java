package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferBatch;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The data plane allocates nothing per request: after warm-up, thousands of SUBMITs and SUBMIT_BATCHes (through
 * intake's per-client ring polling, batch trackers and the aggregated completion) leave the data-plane thread's
 * allocated-bytes count where it was.
 */
@Tag("integration")
@Timeout(120)
class IntakeAllocationTest
{
    private static final int KIB = 1024;

    private final Path directory = SystemTests.newDaemonDirectory();
    private XferDaemon daemon;

    @AfterEach
    void stopDaemon()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldNotAllocateOnTheDataPlanePerRequestOrBatch()
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        try (XferClient client = XferClient.connect(SystemTests.clientContext(directory, "steady")))
        {
            final SharedBuffer buffer = client.allocateMemory(256 * KIB);
            client.registerMemory(buffer, "cpu:0");
            final TransferRequest request = new TransferRequest();
            final TransferBatch transfers = new TransferBatch(16);
            rounds(client, buffer, request, transfers, 300); // warm-up: JIT, trackers, pools
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final long[] dataPlane = dataPlaneThreads();
            assertThat(dataPlane).as("the data-plane thread is found by its agents' names").isNotEmpty();
            final long before = allocated(threads, dataPlane);
            final int rounds = 1000;
            rounds(client, buffer, request, transfers, rounds);
            final long allocated = allocated(threads, dataPlane) - before;

            // 1000 rounds = 32,000 SUBMITs and 1000 batches of 16 entries (48,000 requests): one 16-byte object per
            // request would be 750 KiB; seen here: about 1.4 KiB of noise in all
            assertThat(allocated).as("bytes the data plane allocated for " + rounds + " rounds").isLessThan(16 * KIB);
        }
    }

    private static void rounds(final XferClient client, final SharedBuffer buffer, final TransferRequest request,
        final TransferBatch transfers, final int rounds)
    {
        final long base = buffer.address();
        for (int r = 0; r < rounds; r++)
        {
            final long batch = client.allocateBatch(33);
            for (int i = 0; i < 32; i++)
            {
                client.submitTransfer(batch, request.set(Opcode.WRITE, base + i * KIB, client.ownSegment(),
                    base + 128 * KIB + i * KIB, KIB));
            }
            transfers.reset(Opcode.READ, client.ownSegment());
            for (int i = 0; i < 16; i++)
            {
                transfers.add(base + 64 * KIB + i * KIB, base + 128 * KIB + i * KIB, KIB);
            }
            client.submitBatch(batch, transfers);
            assertThat(client.awaitBatch(batch, WAIT.toMillis())).isTrue();
            client.freeBatch(batch);
        }
    }

    private static long[] dataPlaneThreads()
    {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.getName().contains("xferd-intake") || thread.getName().contains("xferd-transfer"))
            .mapToLong(Thread::threadId).toArray();
    }

    private static long allocated(final com.sun.management.ThreadMXBean threads, final long[] ids)
    {
        long total = 0;
        for (final long bytes : threads.getThreadAllocatedBytes(ids))
        {
            total += bytes;
        }
        return total;
    }
}
