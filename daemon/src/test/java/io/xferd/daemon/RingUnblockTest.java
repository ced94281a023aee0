package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that dies between claiming a record in the shared to-daemon ring and committing it leaves a hole every
 * later record waits behind; the daemon skips it once the ring made no progress for the unblock timeout, so the
 * other clients' requests go through.
 */
@Tag("integration")
@Timeout(60)
class RingUnblockTest
{
    private Path directory;
    private XferDaemon daemon;
    private XferClient honest;
    private MappedByteBuffer cncMapping;

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).ringUnblockTimeoutMs(200));
    }

    @AfterEach
    void stopEverything()
    {
        if (honest != null)
        {
            honest.close();
        }
        if (cncMapping != null)
        {
            IoUtil.unmap(cncMapping);
        }
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldCompleteRequestsQueuedBehindARecordItsProducerNeverCommitted()
    {
        honest = XferClient.connect(SystemTests.clientContext(directory, "honest"));
        final SharedBuffer buffer = honest.allocateMemory(128 * 1024);
        SystemTests.fill(buffer.segment(), 5);
        honest.registerMemory(buffer, "cpu:0");
        cncMapping = IoUtil.mapExistingFile(directory.resolve(CncFileDescriptor.CNC_FILE).toFile(), "cnc");
        final ManyToOneRingBuffer toDaemon =
            new ManyToOneRingBuffer(CncFileDescriptor.toDaemonBuffer(new UnsafeBuffer(cncMapping)));

        final int claimed = toDaemon.tryClaim(RecordTypes.SUBMIT, SubmitRequestFlyweight.HEADER_LENGTH);
        assertThat(claimed).as("claimed a record, then 'died' without committing it").isPositive();

        final long batch = honest.allocateBatch(4);
        for (int i = 0; i < 4; i++)
        {
            honest.submitTransfer(batch, TransferRequest.write(buffer.address() + i * 16 * 1024L, honest.ownSegment(),
                buffer.address() + 64 * 1024 + i * 16 * 1024L, 16 * 1024));
        }
        assertThat(honest.awaitBatch(batch, WAIT.toMillis())).isTrue();

        final byte[] expected = SystemTests.randomBytes(5, 128 * 1024);
        assertThat(SystemTests.firstMismatch(buffer.segment(), 64 * 1024, expected, 0, 64 * 1024)).isEqualTo(-1);
        assertThat(counter(daemon, SystemCounter.RING_UNBLOCKS)).isEqualTo(1);
        assertThat(counter(daemon, SystemCounter.REQUESTS_SUBMITTED))
            .as("the abandoned record is skipped, not taken for a request").isEqualTo(4);
        assertThat(counter(daemon, SystemCounter.MALFORMED_RECORDS)).isZero();
        assertThat(toDaemon.consumerPosition()).isEqualTo(toDaemon.producerPosition());

        honest.transferSyncRead(honest.ownSegment(), buffer.address(), buffer.address() + 64 * 1024, 64 * 1024);
        assertThat(counter(daemon, SystemCounter.RING_UNBLOCKS)).isEqualTo(1);
    }
}
