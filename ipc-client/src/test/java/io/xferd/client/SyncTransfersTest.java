package io.xferd.client;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The synchronous calls return once every byte arrived and throw the daemon's status otherwise; many ranges go as
 * records of at most the daemon's most entries; every call gives its batch back, even one whose wait gave up, once
 * its late completion came. The daemon answers from the wait's idle, on the same thread.
 */
@Timeout(30)
class SyncTransfersTest
{
    private static final int MAX_BATCH_ENTRIES = 4;

    @TempDir
    Path directory;

    private ClientParts parts;
    private SyncTransfers sync;
    private final List<String> records = new ArrayList<>();
    private final SubmitRequestFlyweight request = new SubmitRequestFlyweight();
    private final SubmitBatchFlyweight batch = new SubmitBatchFlyweight();

    @BeforeEach
    void connect()
    {
        parts = new ClientParts(directory, 8, MAX_BATCH_ENTRIES);
        sync = parts.syncTransfers;
    }

    @AfterEach
    void close()
    {
        parts.close();
    }

    /** The daemon's step: note each record, then answer all with {@code status}. */
    private void daemonAnswers(final int status)
    {
        parts.daemonStep = () ->
        {
            parts.daemon.readSubmitRingWithoutTaking((type, buffer, index, length) ->
            {
                if (type == RecordTypes.SUBMIT)
                {
                    request.wrap(buffer, index);
                    records.add("SUBMIT " + Opcode.name(request.opcode()) + " " + request.length());
                }
                else
                {
                    batch.wrap(buffer, index);
                    records.add("SUBMIT_BATCH " + Opcode.name(batch.opcode()) + " x" + batch.entryCount());
                }
            });
            parts.daemon.answerSubmits(status);
        };
    }

    @Test
    void shouldReturnOnceTheWriteCompletedAndGiveItsBatchBack()
    {
        daemonAnswers(TransferStatus.OK);

        sync.transfer(Opcode.WRITE, 7, 0x1000, 0x9000, 4096);
        sync.transfer(Opcode.READ, 7, 0x1000, 0x9000, 512);

        assertThat(records).containsExactly("SUBMIT WRITE 4096", "SUBMIT READ 512");
        assertAllBatchesFree();
    }

    @Test
    void shouldThrowTheDaemonsStatusWhenTheBytesDidNotArrive()
    {
        daemonAnswers(TransferStatus.TARGET_GONE);

        assertThatThrownBy(() -> sync.transfer(Opcode.READ, 7, 0x1000, 0x9000, 4096))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.TARGET_GONE))
            .hasMessageStartingWith("READ failed");
        assertAllBatchesFree();
    }

    @Test
    void shouldSendManyRangesAsRecordsOfAtMostTheDaemonsMostEntries()
    {
        daemonAnswers(TransferStatus.OK);
        final long[] local = new long[10];
        final long[] target = new long[10];
        final long[] lengths = new long[10];
        Arrays.fill(lengths, 64);

        sync.transfer(Opcode.WRITE, 7, local, target, lengths);

        assertThat(records).containsExactly("SUBMIT_BATCH WRITE x4", "SUBMIT_BATCH WRITE x4", "SUBMIT_BATCH WRITE x2");
        assertAllBatchesFree();
    }

    @Test
    void shouldReportTheFirstFailedRecordsStatus()
    {
        final int[] answered = {0};
        parts.daemonStep = () -> answered[0] += parts.daemon.answerSubmits(
            answered[0] == 0 ? TransferStatus.OK : TransferStatus.TARGET_RANGE_NOT_REGISTERED, 1);

        assertThatThrownBy(() -> sync.transfer(Opcode.WRITE, 7, new long[5], new long[5], new long[]{1, 1, 1, 1, 1}))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.TARGET_RANGE_NOT_REGISTERED));
        assertAllBatchesFree();
    }

    @Test
    void shouldRefuseRangesThatDoNotLineUpAndSendNothingForNone()
    {
        assertThatThrownBy(() -> sync.transfer(Opcode.WRITE, 7, new long[2], new long[1], new long[2]))
            .isInstanceOf(IllegalArgumentException.class);
        sync.transfer(Opcode.WRITE, 7, new long[0], new long[0], new long[0]);

        assertThat(parts.daemon.answerSubmits(TransferStatus.OK)).isZero();
        assertAllBatchesFree();
    }

    @Test
    void shouldFreeABatchWhoseWaitGaveUpOnceItsLateCompletionCame()
    {
        assertThatThrownBy(() -> sync.transfer(Opcode.WRITE, 7, 0x1000, 0x9000, 4096))
            .isInstanceOf(XferException.class).hasMessageContaining("without completion");
        assertThat(sync.unfinishedBatches()).isOne();

        parts.daemon.answerSubmits(TransferStatus.OK);
        daemonAnswers(TransferStatus.OK);
        sync.transfer(Opcode.WRITE, 7, 0x1000, 0x9000, 4096);

        assertThat(sync.unfinishedBatches()).isZero();
        assertAllBatchesFree();
    }

    private void assertAllBatchesFree()
    {
        for (int i = 0; i < 4; i++)
        {
            parts.batches.allocate(1);
        }
        assertThatThrownBy(() -> parts.batches.allocate(1)).hasMessageContaining("all 4 batches are in use");
    }
}
