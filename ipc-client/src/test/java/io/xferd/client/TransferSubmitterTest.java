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

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static io.xferd.client.ClientParts.TIMEOUT_MS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A request becomes one SUBMIT record and a batch one SUBMIT_BATCH record on the submit ring, as the daemon reads
 * them; the submitter waits at the daemon's in-flight limit until a completion frees room, gives up after the
 * timeout on the injected clock, and writes nothing it refuses.
 */
@Timeout(30)
class TransferSubmitterTest
{
    private static final int MAX_IN_FLIGHT = 2;
    private static final int MAX_BATCH_ENTRIES = 4;

    @TempDir
    Path directory;

    private ClientParts parts;
    private TransferSubmitter submitter;
    private final SubmitRequestFlyweight request = new SubmitRequestFlyweight();
    private final SubmitBatchFlyweight batch = new SubmitBatchFlyweight();

    @BeforeEach
    void connect()
    {
        parts = new ClientParts(directory, MAX_IN_FLIGHT, MAX_BATCH_ENTRIES);
        submitter = parts.submitter;
    }

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldWriteARequestAsOneSubmitRecordStampedWithTheClock()
    {
        final long batchId = parts.batches.allocate(2);
        parts.nanoClock.update(12_345);

        final int task = submitter.submit(batchId, TransferRequest.write(0x1000, 7, 0x9000, 4096)
            .notify("kv".getBytes(StandardCharsets.UTF_8)).traceId(99));

        assertThat(task).isZero();
        final int[] records = {0};
        parts.daemon.readSubmitRing((type, buffer, index, length) ->
        {
            records[0]++;
            assertThat(type).isEqualTo(RecordTypes.SUBMIT);
            request.wrap(buffer, index);
            assertThat(request.opcode()).isEqualTo(Opcode.WRITE);
            assertThat(request.requestId()).isEqualTo(parts.batches.batch(batchId).requestId(0));
            assertThat(request.segmentHandle()).isEqualTo(7);
            assertThat(request.localAddress()).isEqualTo(0x1000);
            assertThat(request.targetAddress()).isEqualTo(0x9000);
            assertThat(request.length()).isEqualTo(4096);
            assertThat(request.traceId()).isEqualTo(99);
            assertThat(request.submitNanos()).isEqualTo(12_345);
            assertThat(request.notifyLength()).isEqualTo(2);
        });
        assertThat(records[0]).isOne();
        final BatchTable.Batch accounted = parts.batches.batch(batchId);
        assertThat(accounted.state[0]).isEqualTo(TaskStatus.PENDING);
        assertThat(accounted.submitNanos[0]).isEqualTo(12_345);
        assertThat(parts.batches.inFlight()).isOne();
    }

    @Test
    void shouldWriteABatchAsOneRecordAndSendANotifyOnlyWithAWrite()
    {
        final long batchId = parts.batches.allocate(2);
        final TransferBatch transfers = new TransferBatch(4).reset(Opcode.READ, 5)
            .add(0x1000, 0x8000, 100).add(0x2000, 0x9000, 200).notify(new byte[]{1, 2}).traceId(3);

        submitter.submit(batchId, transfers);

        final int[] records = {0};
        parts.daemon.readSubmitRing((type, buffer, index, length) ->
        {
            records[0]++;
            assertThat(type).isEqualTo(RecordTypes.SUBMIT_BATCH);
            batch.wrap(buffer, index);
            assertThat(batch.requestId()).isEqualTo(parts.batches.batch(batchId).requestId(0));
            assertThat(batch.opcode()).isEqualTo(Opcode.READ);
            assertThat(batch.entryCount()).isEqualTo(2);
            assertThat(batch.segmentHandle()).isEqualTo(5);
            assertThat(batch.traceId()).isEqualTo(3);
            assertThat(batch.notifyLength()).as("a READ carries no notify").isZero();
            final int second = batch.entryOffset(0, 1);
            assertThat(buffer.getLong(second + SubmitBatchFlyweight.ENTRY_LOCAL_ADDRESS_OFFSET)).isEqualTo(0x2000);
            assertThat(buffer.getLong(second + SubmitBatchFlyweight.ENTRY_TARGET_ADDRESS_OFFSET)).isEqualTo(0x9000);
            assertThat(buffer.getLong(second + SubmitBatchFlyweight.ENTRY_LENGTH_OFFSET)).isEqualTo(200);
        });
        assertThat(records[0]).isOne();
        assertThat(parts.batches.inFlight()).as("a batch counts as one").isOne();
    }

    @Test
    void shouldWaitAtTheInFlightLimitUntilACompletionFreesRoom()
    {
        final long batchId = parts.batches.allocate(3);
        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));
        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));
        final int[] answered = {0};
        parts.daemonStep = () -> answered[0] += parts.daemon.answerSubmits(TransferStatus.OK);

        assertThat(submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8))).isEqualTo(2);

        assertThat(answered[0]).as("the third went in only once the first two were answered").isEqualTo(2);
        assertThat(parts.idles).isOne();
        assertThat(parts.batches.batch(batchId).state[0]).isEqualTo(TaskStatus.COMPLETED);
        assertThat(parts.batches.inFlight()).isOne();
    }

    @Test
    void shouldGiveUpAfterTheTimeoutWhenNothingCompletes()
    {
        final long batchId = parts.batches.allocate(3);
        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));
        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));

        assertThatThrownBy(() -> submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8)))
            .isInstanceOf(XferException.class)
            .hasMessageContaining("could not submit a request within 50 ms")
            .hasMessageContaining("2 requests in flight");

        assertThat(parts.idles).isBetween((int)TIMEOUT_MS, (int)TIMEOUT_MS + 1);
        assertThat(parts.daemon.answerSubmits(TransferStatus.OK)).isEqualTo(2);
        assertThat(parts.batches.batch(batchId).submitted).isEqualTo(2);
    }

    @Test
    void shouldWriteNothingItRefuses()
    {
        final long batchId = parts.batches.allocate(1);
        assertThatThrownBy(() -> submitter.submit(batchId, TransferRequest.write(0, 1, 0, 8)
            .notify(new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + 1])))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> submitter.submit(batchId, new TransferBatch(1).reset(Opcode.WRITE, 1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1..4 entries, not 0");
        final TransferBatch five = new TransferBatch(5).reset(Opcode.WRITE, 1);
        for (int i = 0; i < 5; i++)
        {
            five.add(0, 0, 1);
        }
        assertThatThrownBy(() -> submitter.submit(batchId, five)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> submitter.submit(batchId + (1L << 24), TransferRequest.read(0, 1, 0, 8)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown or freed batch");

        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));
        assertThatThrownBy(() -> submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8)))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("is full (1 tasks)");

        assertThat(parts.daemon.answerSubmits(TransferStatus.OK)).as("only the one accepted").isOne();
    }

    @Test
    void shouldRefuseToSubmitOnceTheDaemonIsGone()
    {
        final long batchId = parts.batches.allocate(1);
        parts.liveness.markGone("daemon closed the connection");

        assertThatThrownBy(() -> submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8)))
            .isInstanceOf(DaemonGoneException.class);
        assertThat(parts.daemon.answerSubmits(TransferStatus.OK)).isZero();
    }

    @Test
    void shouldStopWaitingForRoomWhenTheDaemonGoesMeanwhile()
    {
        final long batchId = parts.batches.allocate(3);
        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));
        submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8));
        parts.daemonStep = parts.daemon::closeConnection;

        assertThatThrownBy(() -> submitter.submit(batchId, TransferRequest.read(0, 1, 0, 8)))
            .isInstanceOf(DaemonGoneException.class);
        assertThat(parts.batches.batch(batchId).submitted).as("nothing written for a daemon that is gone")
            .isEqualTo(2);
    }
}
