package io.xferd.daemon;

import io.xferd.client.Notification;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferBatch;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A SUBMIT_BATCH into another daemon's segment (two daemons on loopback, TCP): one completion for every entry,
 * the lowest failed entry's status, and the notify reaching the remote owner only once every entry landed (the last
 * entry is held back until the others are acknowledged and carries the notify).
 */
@Tag("integration")
@Timeout(120)
class RemoteBatchTest
{
    private static final int BLOCK = 64 * 1024;
    private static final int ENTRIES = 128;

    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private XferDaemon daemonA;
    private XferDaemon daemonB;

    @AfterEach
    void tearDown()
    {
        if (daemonA != null)
        {
            daemonA.close();
        }
        if (daemonB != null)
        {
            daemonB.close();
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
    }

    @Test
    void shouldCompleteARemoteBatchOnceAndNotifyOnlyAfterEveryEntryLanded()
    {
        daemonA = XferDaemon.launch(SystemTests.daemonContext(dirA).sliceSize(16 * 1024));
        daemonB = XferDaemon.launch(SystemTests.daemonContext(dirB).sliceSize(16 * 1024));
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory((long)ENTRIES * BLOCK);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory((long)ENTRIES * BLOCK);
            SystemTests.fill(source.segment(), 99);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            final TransferBatch transfers = new TransferBatch(ENTRIES).reset(Opcode.WRITE, segment)
                .notify("kv ready".getBytes(StandardCharsets.UTF_8)).traceId(7);
            for (int i = 0; i < ENTRIES; i++)
            {
                transfers.add(source.address() + (long)i * BLOCK, target.address() + (long)i * BLOCK, BLOCK);
            }
            final long batch = prefill.allocateBatch(2);
            prefill.submitBatch(batch, transfers);

            final byte[] expected = SystemTests.randomBytes(99, ENTRIES * BLOCK);
            final List<Notification> seen = awaitNotifies(decode);
            assertThat(seen).hasSize(1);
            assertThat(SystemTests.firstMismatch(target.segment(), 0, expected, 0, (long)ENTRIES * BLOCK))
                .as("every entry landed before the notify").isEqualTo(-1);
            assertThat(seen.get(0).source()).isEqualTo(prefill.segmentName());
            assertThat(prefill.awaitBatch(batch, WAIT.toMillis())).isTrue();
            assertThat(prefill.getTransferStatus(batch, 0).transferredBytes()).isEqualTo((long)ENTRIES * BLOCK);

            // entry 2 beyond the remote range, entry 4 of length 0: the lowest index wins, no notify
            transfers.reset(Opcode.READ, segment);
            for (int i = 0; i < 6; i++)
            {
                transfers.add(source.address() + (long)i * BLOCK,
                    i == 2 ? target.address() + (long)ENTRIES * BLOCK : target.address() + (long)i * BLOCK,
                    i == 4 ? 0 : BLOCK);
            }
            final int failing = prefill.submitBatch(batch, transfers);
            assertThat(prefill.awaitBatch(batch, WAIT.toMillis())).isFalse();
            assertThat(TransferStatus.name(prefill.getTransferStatus(batch, failing).status()))
                .isEqualTo("TARGET_RANGE_NOT_REGISTERED");
            assertThat(prefill.getTransferStatus(batch, failing).transferredBytes()).isZero();
            prefill.freeBatch(batch);

            // a failing WRITE batch with a notify: the held last entry never goes, nor its notify
            final long second = prefill.allocateBatch(1);
            transfers.reset(Opcode.WRITE, segment).notify("must not arrive".getBytes(StandardCharsets.UTF_8))
                .add(source.address(), target.address() + (long)ENTRIES * BLOCK, BLOCK)
                .add(source.address(), target.address(), BLOCK);
            prefill.submitBatch(second, transfers);
            assertThat(prefill.awaitBatch(second, WAIT.toMillis())).isFalse();
            prefill.freeBatch(second);
            final long third = prefill.allocateBatch(1);
            transfers.reset(Opcode.WRITE, segment).notify("sentinel".getBytes(StandardCharsets.UTF_8))
                .add(source.address(), target.address(), BLOCK);
            prefill.submitBatch(third, transfers);
            assertThat(prefill.awaitBatch(third, WAIT.toMillis())).isTrue();
            prefill.freeBatch(third);
            assertThat(awaitNotifies(decode)).extracting(n -> new String(n.message(), StandardCharsets.UTF_8))
                .containsExactly("sentinel");
        }
    }

    private static List<Notification> awaitNotifies(final XferClient client)
    {
        List<Notification> seen = List.of();
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (seen.isEmpty() && System.nanoTime() < deadline)
        {
            seen = client.getNotifies();
        }
        return seen;
    }
}
