package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The daemon checks every request it takes from the ring and fails a bad one alone, with a status that says what
 * was wrong; the daemon and the client that sent it carry on.
 */
@Tag("integration")
@Timeout(60)
class RequestValidationTest
{
    private static final int LENGTH = 64 * 1024;

    private Path directory;
    private XferDaemon daemon;
    private XferClient initiator;
    private XferClient target;
    private SharedBuffer local;
    private SharedBuffer remote;
    private long segment;

    /**
     * One way to get a request wrong, and the status the daemon must answer it with.
     */
    enum BadRequest
    {
        UNKNOWN_SEGMENT_HANDLE(TransferStatus.UNKNOWN_SEGMENT),
        LOCAL_RANGE_NOT_REGISTERED(TransferStatus.LOCAL_RANGE_NOT_REGISTERED),
        TARGET_RANGE_ONE_BYTE_PAST_THE_END(TransferStatus.TARGET_RANGE_NOT_REGISTERED),
        TARGET_RANGE_BEFORE_THE_START(TransferStatus.TARGET_RANGE_NOT_REGISTERED),
        ZERO_LENGTH(TransferStatus.INVALID_LENGTH),
        NEGATIVE_LENGTH(TransferStatus.INVALID_LENGTH),
        OPCODE_SEVEN(TransferStatus.INVALID_OPCODE);

        final int status;

        BadRequest(final int status)
        {
            this.status = status;
        }
    }

    @BeforeEach
    void startDaemonAndClients()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        initiator = XferClient.connect(SystemTests.clientContext(directory, "initiator"));
        target = XferClient.connect(SystemTests.clientContext(directory, "target"));
        local = initiator.allocateMemory(2L * LENGTH);
        SystemTests.fill(local.segment(), 11);
        initiator.registerMemory(local.address(), LENGTH, "cpu:0");
        remote = target.allocateMemory(LENGTH);
        target.registerMemory(remote, "cpu:0");
        segment = initiator.openSegment("target");
    }

    @AfterEach
    void stopEverything()
    {
        if (initiator != null)
        {
            initiator.close();
        }
        if (target != null)
        {
            target.close();
        }
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    private TransferRequest request(final BadRequest bad)
    {
        final long from = local.address();
        final long to = remote.address();
        return switch (bad)
        {
            case UNKNOWN_SEGMENT_HANDLE -> TransferRequest.write(from, segment ^ (1L << 40), to, 4096);
            case LOCAL_RANGE_NOT_REGISTERED -> TransferRequest.write(from + LENGTH, segment, to, 4096);
            case TARGET_RANGE_ONE_BYTE_PAST_THE_END -> TransferRequest.write(from, segment, to + 1, LENGTH);
            case TARGET_RANGE_BEFORE_THE_START -> TransferRequest.read(from, segment, to - 1, 4096);
            case ZERO_LENGTH -> TransferRequest.write(from, segment, to, 0);
            case NEGATIVE_LENGTH -> TransferRequest.read(from, segment, to, -4096);
            case OPCODE_SEVEN -> new TransferRequest().set(7, from, segment, to, 4096);
        };
    }

    @ParameterizedTest
    @EnumSource(BadRequest.class)
    void shouldFailABadRequestWithItsStatusAndKeepServing(final BadRequest bad)
    {
        final long batch = initiator.allocateBatch(1);
        initiator.submitTransfer(batch, request(bad));

        assertThat(initiator.awaitBatch(batch, WAIT.toMillis())).isFalse();
        final TaskStatus status = initiator.getTransferStatus(batch, 0);
        assertThat(status.state()).isEqualTo(TaskStatus.FAILED);
        assertThat(TransferStatus.name(status.status())).isEqualTo(TransferStatus.name(bad.status));
        assertThat(status.transferredBytes()).isZero();
        assertThat(remote.segment().toArray(ValueLayout.JAVA_BYTE))
            .as("a failed request moves nothing").containsOnly(0);
        initiator.freeBatch(batch);

        assertAGoodTransferStillWorks();
        assertThat(counter(daemon, SystemCounter.REQUESTS_FAILED)).isEqualTo(1);
        assertThat(counter(daemon, SystemCounter.MALFORMED_RECORDS)).isZero();
        assertThat(counter(daemon, SystemCounter.CLIENTS_DISCONNECTED)).isZero();
    }

    @Test
    void shouldFailEveryBadRequestOfABatchAloneAndCompleteTheGoodOnes()
    {
        final BadRequest[] bads = BadRequest.values();
        final long batch = initiator.allocateBatch(2 * bads.length);
        for (final BadRequest bad : bads)
        {
            initiator.submitTransfer(batch, request(bad));
            initiator.submitTransfer(batch, TransferRequest.write(local.address(), segment, remote.address(), 4096));
        }

        assertThat(initiator.awaitBatch(batch, WAIT.toMillis())).isFalse();
        for (int i = 0; i < bads.length; i++)
        {
            assertThat(TransferStatus.name(initiator.getTransferStatus(batch, 2 * i).status()))
                .as(bads[i].name()).isEqualTo(TransferStatus.name(bads[i].status));
            assertThat(initiator.getTransferStatus(batch, 2 * i + 1).state()).isEqualTo(TaskStatus.COMPLETED);
        }
        initiator.freeBatch(batch);
        assertAGoodTransferStillWorks();
        assertThat(counter(daemon, SystemCounter.REQUESTS_FAILED)).isEqualTo(bads.length);
    }

    /**
     * A client may submit as soon as it has read its WELCOME (slot and session token), so the daemon must know the
     * session before it sends the WELCOME; a record that arrives first would be dropped as unattributable and its
     * request never answered.
     */
    @Test
    void shouldTakeARequestSubmittedTheMomentTheClientIsWelcomed()
    {
        for (int i = 0; i < 200; i++)
        {
            try (XferClient newcomer = XferClient.connect(SystemTests.clientContext(directory, "newcomer-" + i)))
            {
                final long batch = newcomer.allocateBatch(1);
                newcomer.submitTransfer(batch, TransferRequest.write(0, segment, remote.address(), 4096));
                assertThat(newcomer.awaitBatch(batch, 5_000)).as("newcomer %d gets an answer", i).isFalse();
                assertThat(TransferStatus.name(newcomer.getTransferStatus(batch, 0).status()))
                    .isEqualTo("LOCAL_RANGE_NOT_REGISTERED");
            }
        }
        assertThat(counter(daemon, SystemCounter.MALFORMED_RECORDS)).isZero();
    }

    private void assertAGoodTransferStillWorks()
    {
        initiator.transferSyncWrite(segment, local.address(), remote.address(), LENGTH);
        final byte[] expected = SystemTests.randomBytes(11, 2 * LENGTH);
        assertThat(SystemTests.firstMismatch(remote.segment(), 0, expected, 0, LENGTH)).isEqualTo(-1);
        initiator.transferSyncRead(segment, local.address() + LENGTH / 2, remote.address(), LENGTH / 2);
        assertThat(SystemTests.firstMismatch(local.segment(), LENGTH / 2, expected, 0, LENGTH / 2)).isEqualTo(-1);
        assertThat(initiator.isDaemonGone()).isFalse();
    }
}
