package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.Notification;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferFailedException;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Clients move bytes between each other's registered memory through their daemon: two client processes push
 * (WRITE) and pull (READ) random data, and the API's addressing rules hold (registered ranges, segment names,
 * notifications).
 */
@Tag("integration")
@Timeout(90)
class ClientToClientTransferTest
{
    private static final int SIZE = 8 * 1024 * 1024;
    private static final int KIB = 1024;

    private Path directory;
    private XferDaemon daemon;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
    }

    @AfterEach
    void stopEverything() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        resources.add(resource);
        return resource;
    }

    private XferClient connect(final String name)
    {
        return track(XferClient.connect(SystemTests.clientContext(directory, name)));
    }

    @Test
    void shouldPushAndPullRandomDataBetweenTwoClientProcesses()
    {
        final long targetSeed = 0x7A11_0001L;
        final long sourceSeed = 0x7A11_0002L;
        final ChildProcess decode = track(ChildProcess.start("decode", ClientRoleMain.class,
            "hold", directory.toString(), "decode", Integer.toString(SIZE), Long.toString(targetSeed)));
        final String[] ready = decode.awaitLine("READY ", WAIT).split(" ");
        assertThat(ready[1]).isEqualTo(daemon.rpcAddress() + "/decode");

        final ChildProcess prefill = track(ChildProcess.start("prefill", ClientRoleMain.class,
            "push-pull", directory.toString(), "prefill", ready[1], ready[2], Integer.toString(SIZE),
            Long.toString(sourceSeed), Long.toString(targetSeed), Integer.toString(256 * KIB)));
        assertThat(prefill.awaitExit(WAIT)).as(prefill.output()).isZero();
        assertThat(prefill.output()).contains("PUSHED 16 requests", "PULLED 16 requests", "VERIFIED");

        decode.sendLine("VERIFY " + sourceSeed + " " + SIZE + " 0 " + SIZE / 2);
        assertThat(decode.awaitLine("CHECKED", WAIT)).isEqualTo("CHECKED ok");
        decode.sendLine("VERIFY " + targetSeed + " " + SIZE + " " + SIZE / 2 + " " + SIZE / 2);
        assertThat(decode.awaitLine("CHECKED", WAIT)).as("READ must not change the target").isEqualTo("CHECKED ok");

        assertThat(counter(daemon, SystemCounter.BYTES_WRITTEN)).isEqualTo(SIZE / 2);
        assertThat(counter(daemon, SystemCounter.BYTES_READ)).isEqualTo(SIZE / 2);
        assertThat(counter(daemon, SystemCounter.REQUESTS_COMPLETED)).isEqualTo(32);
        assertThat(counter(daemon, SystemCounter.REQUESTS_FAILED)).isZero();
    }

    @Test
    void shouldOpenASegmentByItsNameOrByItsFullName()
    {
        final XferClient prefill = connect("prefill");
        final XferClient decode = connect("decode");

        assertThat(decode.segmentName()).isEqualTo(daemon.rpcAddress() + "/decode");
        assertThat(prefill.openSegment("decode")).isEqualTo(decode.ownSegment());
        assertThat(prefill.openSegment(daemon.rpcAddress() + "/decode")).isEqualTo(decode.ownSegment());
        assertThat(prefill.openSegment("prefill")).isEqualTo(prefill.ownSegment());
        assertThatThrownBy(() -> prefill.openSegment("nobody"))
            .isInstanceOfSatisfying(ControlException.class,
                ex -> assertThat(ex.code()).isEqualTo(ControlError.UNKNOWN_SEGMENT));
    }

    @Test
    void shouldRefuseASecondClientWithASegmentNameInUse()
    {
        connect("decode");

        assertThatThrownBy(() -> connect("decode"))
            .isInstanceOfSatisfying(ControlException.class,
                ex -> assertThat(ex.code()).isEqualTo(ControlError.DUPLICATE_SEGMENT_NAME));
        assertThat(connect("decode-1").segmentName()).endsWith("/decode-1");
    }

    @Test
    void shouldMoveBytesOnlyWithinOneRegisteredRangeOfEachSide()
    {
        final XferClient prefill = connect("prefill");
        final XferClient decode = connect("decode");
        final SharedBuffer source = prefill.allocateMemory(64 * KIB);
        SystemTests.fill(source.segment(), 1);
        prefill.registerMemory(source.address() + 16 * KIB, 32 * KIB, "cpu:0");
        final SharedBuffer target = decode.allocateMemory(256 * KIB);
        final long base = target.address();
        decode.registerMemory(base, 64 * KIB, "cpu:0");
        decode.registerMemory(base + 64 * KIB, 64 * KIB, "cpu:0");
        decode.registerMemory(base + 192 * KIB, 64 * KIB, "cpu:0");
        final long segment = prefill.openSegment("decode");
        final long local = source.address() + 16 * KIB;

        prefill.transferSyncWrite(segment, local, base + 60 * KIB, 4 * KIB);
        prefill.transferSyncWrite(segment, local + 4 * KIB, base + 192 * KIB, 28 * KIB);
        final byte[] expected = SystemTests.randomBytes(1, 64 * KIB);
        assertThat(SystemTests.firstMismatch(target.segment(), 60 * KIB, expected, 16 * KIB, 4 * KIB)).isEqualTo(-1);
        assertThat(SystemTests.firstMismatch(target.segment(), 192 * KIB, expected, 20 * KIB, 28 * KIB))
            .isEqualTo(-1);
        assertThat(target.segment().asSlice(64 * KIB, 128 * KIB).toArray(ValueLayout.JAVA_BYTE))
            .as("nothing landed outside the requested ranges").containsOnly(0);

        assertWriteFails(prefill, segment, local, base + 128 * KIB, 4 * KIB,
            TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertWriteFails(prefill, segment, local, base + 60 * KIB, 8 * KIB,
            TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertWriteFails(prefill, segment, local, base + 124 * KIB, 8 * KIB,
            TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        assertWriteFails(prefill, segment, source.address(), base, 4 * KIB,
            TransferStatus.LOCAL_RANGE_NOT_REGISTERED);
        assertWriteFails(prefill, segment, local + 28 * KIB, base, 8 * KIB,
            TransferStatus.LOCAL_RANGE_NOT_REGISTERED);

        decode.unregisterMemory(base + 192 * KIB);
        assertWriteFails(prefill, segment, local, base + 192 * KIB, 4 * KIB,
            TransferStatus.TARGET_RANGE_NOT_REGISTERED);
        prefill.transferSyncRead(segment, local, base + 60 * KIB, 4 * KIB);
    }

    private static void assertWriteFails(final XferClient client, final long segment, final long local,
        final long target, final long length, final int status)
    {
        assertThatThrownBy(() -> client.transferSyncWrite(segment, local, target, length))
            .as("WRITE of %d bytes to target offset", length)
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(TransferStatus.name(ex.status())).isEqualTo(TransferStatus.name(status)));
    }

    @Test
    void shouldDeliverANotificationToTheTargetWithTheSourcesSegmentName()
    {
        final XferClient prefill = connect("prefill");
        final XferClient decode = connect("decode");
        final SharedBuffer source = prefill.allocateMemory(4 * KIB);
        prefill.registerMemory(source, "cpu:0");
        final SharedBuffer target = decode.allocateMemory(4 * KIB);
        decode.registerMemory(target, "cpu:0");
        final long segment = prefill.openSegment("decode");

        final long batch = prefill.allocateBatch(2);
        prefill.submitTransfer(batch, TransferRequest.write(source.address(), segment, target.address(), 4 * KIB)
            .notify("layer 27".getBytes(StandardCharsets.UTF_8)).traceId(42));
        prefill.submitTransfer(batch, TransferRequest.read(source.address(), segment, target.address(), 4 * KIB)
            .notify("not for reads".getBytes(StandardCharsets.UTF_8)));
        assertThat(prefill.awaitBatch(batch, WAIT.toMillis())).isTrue();

        final List<Notification> received = new ArrayList<>();
        SystemTests.awaitCondition(() -> received.addAll(decode.getNotifies()) || !received.isEmpty(), WAIT,
            () -> "a notification for decode");
        assertThat(received).hasSize(1);
        final Notification notification = received.getFirst();
        assertThat(notification.source()).isEqualTo(prefill.segmentName());
        assertThat(notification.messageAsString()).isEqualTo("layer 27");
        assertThat(notification.traceId()).isEqualTo(42);
        assertThat(prefill.getNotifies()).as("the writer gets no notification").isEmpty();
        assertThat(counter(daemon, SystemCounter.NOTIFICATIONS_DELIVERED)).isEqualTo(1);
    }
}
