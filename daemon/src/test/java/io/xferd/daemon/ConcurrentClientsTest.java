package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Eight clients, each its own segment on its own thread, hammer one daemon at once with small random WRITEs into
 * a shared target and READs back: every byte of every request is checked, and the shared target ends up holding
 * exactly what each client last wrote into its part of it.
 */
@Tag("integration")
@Timeout(180)
class ConcurrentClientsTest
{
    private static final int CLIENTS = 8;
    private static final int REQUESTS_PER_CLIENT = 2048;
    private static final int BLOCK = 4 * 1024;
    private static final int BLOCKS_PER_CLIENT = 32;
    private static final int AREA = BLOCK * BLOCKS_PER_CLIENT;
    private static final int BATCH = 16;

    private Path directory;
    private XferDaemon daemon;
    private XferClient shared;
    private final List<XferClient> clients = new ArrayList<>();
    private ExecutorService threads;

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        threads = Executors.newFixedThreadPool(CLIENTS);
    }

    @AfterEach
    void stopEverything() throws InterruptedException
    {
        threads.shutdownNow();
        threads.awaitTermination(10, TimeUnit.SECONDS);
        synchronized (clients)
        {
            clients.forEach(XferClient::close);
        }
        if (shared != null)
        {
            shared.close();
        }
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldVerifyEveryByteOfThousandsOfRequestsFromEightClientsAtOnce() throws Exception
    {
        shared = XferClient.connect(SystemTests.clientContext(directory, "shared"));
        final SharedBuffer target = shared.allocateMemory((long)CLIENTS * AREA);
        shared.registerMemory(target, "cpu:0");

        final List<Future<byte[]>> results = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++)
        {
            final int index = i;
            results.add(threads.submit(() -> runClient(index, target.address() + (long)index * AREA)));
        }
        for (int i = 0; i < CLIENTS; i++)
        {
            final byte[] lastWritten = results.get(i).get(WAIT.toSeconds() * 6, TimeUnit.SECONDS);
            assertThat(SystemTests.firstMismatch(target.segment(), (long)i * AREA, lastWritten, 0, AREA))
                .as("client %d's part of the shared target", i).isEqualTo(-1);
        }
        assertThat(counter(daemon, SystemCounter.REQUESTS_COMPLETED)).isEqualTo((long)CLIENTS * REQUESTS_PER_CLIENT);
        assertThat(counter(daemon, SystemCounter.REQUESTS_FAILED)).isZero();
        assertThat(counter(daemon, SystemCounter.BYTES_WRITTEN) + counter(daemon, SystemCounter.BYTES_READ))
            .isEqualTo((long)CLIENTS * REQUESTS_PER_CLIENT * BLOCK);
    }

    /**
     * Rounds of: fill BATCH random blocks, WRITE them to random blocks of this client's area of the target, READ
     * those blocks back into a second buffer, compare.
     *
     * @return what this client's area of the target must hold at the end.
     */
    private byte[] runClient(final int index, final long areaAddress)
    {
        final XferClient client = XferClient.connect(SystemTests.clientContext(directory, "worker-" + index));
        synchronized (clients)
        {
            clients.add(client);
        }
        final SharedBuffer out = client.allocateMemory((long)BATCH * BLOCK);
        final SharedBuffer in = client.allocateMemory((long)BATCH * BLOCK);
        client.registerMemory(out, "cpu:0");
        client.registerMemory(in, "cpu:0");
        final long segment = client.openSegment("shared");
        final SplittableRandom random = new SplittableRandom(index);
        final byte[] shadow = new byte[AREA];
        final byte[] data = new byte[BATCH * BLOCK];
        final int[] blocks = new int[BATCH];
        final TransferRequest request = new TransferRequest();

        for (int done = 0; done < REQUESTS_PER_CLIENT; done += 2 * BATCH)
        {
            random.nextBytes(data);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, out.segment(), 0, data.length);
            chooseDistinctBlocks(random, blocks);
            transfer(client, request, Opcode.WRITE, segment, out.address(), areaAddress, blocks);
            transfer(client, request, Opcode.READ, segment, in.address(), areaAddress, blocks);
            final long mismatch = MemorySegment.mismatch(in.segment(), 0, data.length,
                MemorySegment.ofArray(data), 0, data.length);
            assertThat(mismatch).as("worker-%d read back what it wrote, round at request %d", index, done)
                .isEqualTo(-1);
            for (int i = 0; i < BATCH; i++)
            {
                System.arraycopy(data, i * BLOCK, shadow, blocks[i] * BLOCK, BLOCK);
            }
        }
        return shadow;
    }

    private static void chooseDistinctBlocks(final SplittableRandom random, final int[] blocks)
    {
        final boolean[] taken = new boolean[BLOCKS_PER_CLIENT];
        for (int i = 0; i < blocks.length; i++)
        {
            int block;
            do
            {
                block = random.nextInt(BLOCKS_PER_CLIENT);
            }
            while (taken[block]);
            taken[block] = true;
            blocks[i] = block;
        }
    }

    private static void transfer(final XferClient client, final TransferRequest request, final int opcode,
        final long segment, final long localAddress, final long areaAddress, final int[] blocks)
    {
        final long batch = client.allocateBatch(blocks.length);
        for (int i = 0; i < blocks.length; i++)
        {
            client.submitTransfer(batch, request.set(opcode, localAddress + (long)i * BLOCK, segment,
                areaAddress + (long)blocks[i] * BLOCK, BLOCK));
        }
        if (!client.awaitBatch(batch, WAIT.toMillis()))
        {
            for (int i = 0; i < blocks.length; i++)
            {
                final TaskStatus status = client.getTransferStatus(batch, i);
                assertThat(status.state()).as("%s task %d: %s", Opcode.name(opcode), i, status)
                    .isEqualTo(TaskStatus.COMPLETED);
            }
        }
        client.freeBatch(batch);
    }
}
