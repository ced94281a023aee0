package io.xferd.daemon;

import io.xferd.client.Notification;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferBatch;
import io.xferd.client.XferClient;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * SUBMIT_BATCH: many requests in one submit ring record, ONE completion for all of them (OK only when every entry
 * landed, else the lowest failed entry's status), the notify delivered once every entry landed and never when one
 * failed; and the version 2 HELLO rules.
 */
@Tag("integration")
@Timeout(120)
class SubmitBatchTest
{
    private static final int KIB = 1024;

    private Path directory;
    private XferDaemon daemon;

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
    }

    @AfterEach
    void stopDaemon()
    {
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldAnswerABatchOfThousandsOfEntriesWithOneCompletion()
    {
        final int block = KIB;
        try (RawControlSession client = RawControlSession.hello(directory, "batcher", WAIT);
            Memory memory = Memory.register(client, 8L * KIB * KIB))
        {
            final int entries = client.maxBatchEntries();
            assertThat(entries).as("WELCOME's max batch entries").isGreaterThanOrEqualTo(4096);
            SystemTests.fill(memory.segment.asSlice(0, (long)entries * block), 41);
            final long submittedBefore = counter(daemon, SystemCounter.REQUESTS_SUBMITTED);

            final long batchId = 0xBA7C4L;
            writeBatch(client, batchId, Opcode.WRITE, client.segmentHandle(), entries, null,
                i -> new long[]{memory.address + (long)i * block, memory.address + 4L * KIB * KIB + (long)i * block,
                    block});
            final List<long[]> batchCompletions = client.completionsUntil(batchId, WAIT);
            assertThat(batchCompletions).as("nothing before the batch's one completion").hasSize(1);
            assertThat(batchCompletions.get(0)[1]).as("status").isEqualTo(TransferStatus.OK);
            assertThat(batchCompletions.get(0)[2]).as("bytes: every entry's").isEqualTo((long)entries * block);
            assertThat(SystemTests.firstMismatch(memory.segment, 4L * KIB * KIB,
                SystemTests.randomBytes(41, entries * block), 0, (long)entries * block)).isEqualTo(-1);

            // a sentinel after it: no stray per-entry completion comes in between
            final long sentinel = 0x5E47L;
            writeSubmit(client, sentinel, Opcode.READ, client.segmentHandle(), memory.address, memory.address + 64, 8,
                0);
            final List<long[]> after = client.completionsUntil(sentinel, WAIT);
            assertThat(after).hasSize(1);
            assertThat(after.get(0)[1]).isEqualTo(TransferStatus.OK);
            assertThat(counter(daemon, SystemCounter.REQUESTS_SUBMITTED) - submittedBefore)
                .as("entries are counted as requests").isEqualTo(entries + 1L);
        }
    }

    @Test
    void shouldReportTheStatusOfTheLowestIndexEntryThatFailed()
    {
        try (XferClient client = XferClient.connect(SystemTests.clientContext(directory, "batcher")))
        {
            final SharedBuffer buffer = client.allocateMemory(256 * KIB);
            client.registerMemory(buffer, "cpu:0");
            final long base = buffer.address();
            final TransferBatch transfers = new TransferBatch(4);
            final long batch = client.allocateBatch(3);

            transfers.reset(Opcode.WRITE, client.ownSegment());
            for (int i = 0; i < 20; i++)
            {
                final long target = i == 5 ? base + 256 * KIB : base + 128 * KIB + i * KIB;
                transfers.add(base + i * KIB, target, i == 12 ? 0 : KIB);
            }
            final int unregisteredFirst = client.submitBatch(batch, transfers);

            transfers.reset(Opcode.READ, client.ownSegment());
            for (int i = 0; i < 20; i++)
            {
                final long target = i == 9 ? base - 4 * KIB : base + 128 * KIB + i * KIB;
                transfers.add(base + i * KIB, target, i == 3 ? 0 : KIB);
            }
            final int zeroLengthFirst = client.submitBatch(batch, transfers);

            transfers.reset(Opcode.WRITE, client.ownSegment()).add(base, base + 64 * KIB, 64 * KIB);
            final int allGood = client.submitBatch(batch, transfers);

            assertThat(client.awaitBatch(batch, WAIT.toMillis())).isFalse();
            assertThat(TransferStatus.name(client.getTransferStatus(batch, unregisteredFirst).status()))
                .isEqualTo("TARGET_RANGE_NOT_REGISTERED");
            assertThat(client.getTransferStatus(batch, unregisteredFirst).transferredBytes()).isZero();
            assertThat(TransferStatus.name(client.getTransferStatus(batch, zeroLengthFirst).status()))
                .isEqualTo("INVALID_LENGTH");
            assertThat(TransferStatus.name(client.getTransferStatus(batch, allGood).status())).isEqualTo("OK");
            assertThat(client.getTransferStatus(batch, allGood).transferredBytes()).isEqualTo(64 * KIB);
            client.freeBatch(batch);
        }
    }

    @Test
    void shouldDeliverTheNotifyOnlyOnceEveryEntryLandedAndNeverWhenOneFailed()
    {
        final int entries = 256;
        final int block = 64 * KIB;
        try (XferClient sender = XferClient.connect(SystemTests.clientContext(directory, "prefill"));
            XferClient receiver = XferClient.connect(SystemTests.clientContext(directory, "decode")))
        {
            final SharedBuffer source = sender.allocateMemory((long)entries * block);
            SystemTests.fill(source.segment(), 77);
            sender.registerMemory(source, "cpu:0");
            final SharedBuffer target = receiver.allocateMemory((long)entries * block);
            receiver.registerMemory(target, "cpu:0");
            final long segment = sender.openSegment("decode");

            final TransferBatch transfers = new TransferBatch(entries).reset(Opcode.WRITE, segment)
                .notify("layers 0-255 done".getBytes(StandardCharsets.UTF_8)).traceId(4242);
            for (int i = entries - 1; i >= 0; i--)
            {
                transfers.add(source.address() + (long)i * block, target.address() + (long)i * block, block);
            }
            final long batch = sender.allocateBatch(2);
            sender.submitBatch(batch, transfers);

            // the receiver checks every byte the moment it sees the notify
            final byte[] expected = SystemTests.randomBytes(77, entries * block);
            List<Notification> seen = List.of();
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (seen.isEmpty() && System.nanoTime() < deadline)
            {
                seen = receiver.getNotifies();
            }
            assertThat(seen).hasSize(1);
            assertThat(SystemTests.firstMismatch(target.segment(), 0, expected, 0, (long)entries * block))
                .as("every entry landed before the notify").isEqualTo(-1);
            assertThat(new String(seen.get(0).message(), StandardCharsets.UTF_8)).isEqualTo("layers 0-255 done");
            assertThat(seen.get(0).traceId()).isEqualTo(4242);
            assertThat(sender.awaitBatch(batch, WAIT.toMillis())).isTrue();
            assertThat(sender.getTransferStatus(batch, 0).transferredBytes()).isEqualTo((long)entries * block);

            // one entry out of the target's range: the batch fails and its notify never goes
            transfers.reset(Opcode.WRITE, segment).notify("must not arrive".getBytes(StandardCharsets.UTF_8))
                .add(source.address(), target.address(), block)
                .add(source.address(), target.address() + (long)entries * block, block);
            final int failing = sender.submitBatch(batch, transfers);
            assertThat(sender.awaitBatch(batch, WAIT.toMillis())).isFalse();
            assertThat(TransferStatus.name(sender.getTransferStatus(batch, failing).status()))
                .isEqualTo("TARGET_RANGE_NOT_REGISTERED");
            sender.freeBatch(batch);
            // a later notify proves the ring was read past where the failed batch's would have been
            final io.xferd.client.TransferRequest sentinel = io.xferd.client.TransferRequest.write(source.address(),
                segment, target.address(), 8).notify("sentinel".getBytes(StandardCharsets.UTF_8));
            final long single = sender.allocateBatch(1);
            sender.submitTransfer(single, sentinel);
            assertThat(sender.awaitBatch(single, WAIT.toMillis())).isTrue();
            sender.freeBatch(single);
            List<Notification> later = List.of();
            final long until = System.nanoTime() + WAIT.toNanos();
            while (later.isEmpty() && System.nanoTime() < until)
            {
                later = receiver.getNotifies();
            }
            assertThat(later).extracting(n -> new String(n.message(), StandardCharsets.UTF_8))
                .containsExactly("sentinel");
        }
    }

    @Test
    void shouldFailAnOverlongNotifyWithAStatusWhenTheRecordIsWellFramed()
    {
        try (RawControlSession client = RawControlSession.hello(directory, "chatty", WAIT);
            Memory memory = Memory.register(client, 64 * KIB))
        {
            writeSubmit(client, 1, Opcode.WRITE, client.segmentHandle(), memory.address, memory.address + 32 * KIB,
                KIB, SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + 1);
            assertThat(TransferStatus.name((int)client.awaitCompletion(1, WAIT)[0])).isEqualTo("INVALID_NOTIFY");
            writeBatch(client, 2, Opcode.WRITE, client.segmentHandle(), 1, new byte[1000],
                i -> new long[]{memory.address, memory.address + 32 * KIB, KIB});
            assertThat(TransferStatus.name((int)client.awaitCompletion(2, WAIT)[0])).isEqualTo("INVALID_NOTIFY");
            assertThat(client.isOpenedByDaemon()).as("a status, not a disconnect").isTrue();
            assertThat(client.submitAndAwait(Opcode.WRITE, client.segmentHandle(), memory.address,
                memory.address + 32 * KIB, KIB, WAIT)).isEqualTo(TransferStatus.OK);
        }
    }

    @Test
    void shouldRefuseAVersionOneHelloWithAClearMessage()
    {
        try (RawControlSession old = RawControlSession.connect(directory))
        {
            // version 1's layout: version, pid, then the name at 8
            final ControlFrame answer = old.request(frame -> frame.begin(ControlMessages.HELLO)
                .putInt(0, 1).putInt(4, 1234).putString(8, "old-client"), WAIT);
            assertThat(answer.type()).isEqualTo(ControlMessages.ERROR);
            assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE)))
                .isEqualTo("PROTOCOL_VERSION_MISMATCH");
            assertThat(answer.getString(ControlMessages.ERROR_MESSAGE))
                .contains("protocol version 2").contains("version 1");
            assertThat(old.awaitClosedByDaemon(WAIT)).isTrue();
        }
        try (RawControlSession current = RawControlSession.hello(directory, "current", WAIT))
        {
            assertThat(current.isOpenedByDaemon()).isTrue();
        }
    }

    @Test
    void shouldAnswerAnOversizedOrMalformedHelloAndKeepServing()
    {
        final String longName = "n".repeat(1000);
        try (RawControlSession client = RawControlSession.connect(directory))
        {
            final ControlFrame answer = client.request(frame -> hello(frame, 0, longName), WAIT);
            assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE))).isEqualTo("INVALID_ARGUMENT");
            assertThat(answer.getString(ControlMessages.ERROR_MESSAGE).length())
                .as("the refusal fits a frame whatever the name").isLessThanOrEqualTo(ControlFrame.MAX_STRING_LENGTH);
        }
        try (RawControlSession client = RawControlSession.connect(directory))
        {
            final ControlFrame answer = client.request(frame -> hello(frame, 0x40, "flags"), WAIT);
            assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE))).isEqualTo("INVALID_ARGUMENT");
            assertThat(answer.getString(ControlMessages.ERROR_MESSAGE)).contains("flags");
        }
        try (RawControlSession client = RawControlSession.connect(directory))
        {
            // a string length beyond the frame: an answer, the conductor goes on
            final ControlFrame answer = client.request(frame ->
            {
                hello(frame, 0, "x");
                frame.putInt(ControlMessages.HELLO_NAME, 3000);
            }, WAIT);
            assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE))).isEqualTo("MALFORMED_MESSAGE");
        }
        try (RawControlSession client = RawControlSession.connect(directory))
        {
            final ControlFrame answer = client.request(frame -> frame.begin(ControlMessages.HELLO)
                .putInt(ControlMessages.HELLO_VERSION, ControlMessages.PROTOCOL_VERSION), WAIT);
            assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE))).isEqualTo("MALFORMED_MESSAGE");
        }
        try (XferClient client = XferClient.connect(SystemTests.clientContext(directory, "after")))
        {
            final SharedBuffer buffer = client.allocateMemory(8 * KIB);
            client.registerMemory(buffer, "cpu:0");
            client.transferSyncWrite(client.ownSegment(), buffer.address(), buffer.address() + 4 * KIB, 4 * KIB);
        }
    }

    private static void hello(final ControlFrame frame, final int flags, final String name)
    {
        frame.begin(ControlMessages.HELLO)
            .putInt(ControlMessages.HELLO_VERSION, ControlMessages.PROTOCOL_VERSION)
            .putInt(ControlMessages.HELLO_PID, 1)
            .putInt(ControlMessages.HELLO_FLAGS, flags)
            .putInt(ControlMessages.HELLO_FLAGS + 4, 0)
            .putString(ControlMessages.HELLO_NAME, name);
    }

    private static void writeSubmit(
        final RawControlSession client, final long requestId, final int opcode, final long segment,
        final long localAddress, final long targetAddress, final long length, final int notifyLength)
    {
        final OneToOneRingBuffer ring = client.submitRing();
        final int index = ring.tryClaim(RecordTypes.SUBMIT, SubmitRequestFlyweight.recordLength(notifyLength));
        assertThat(index).isPositive();
        new SubmitRequestFlyweight().wrap(ring.buffer(), index).clearReserved().opcode(opcode).requestId(requestId)
            .segmentHandle(segment).localAddress(localAddress).targetAddress(targetAddress).length(length).traceId(0)
            .submitNanos(System.nanoTime()).putNotify(new byte[notifyLength], 0, notifyLength);
        ring.commit(index);
        client.ringDoorbell();
    }

    /**
     * One record with every entry: written raw into the client's own ring, as any client would.
     */
    private static void writeBatch(
        final RawControlSession client, final long requestId, final int opcode, final long segment, final int entries,
        final byte[] notify, final java.util.function.IntFunction<long[]> entry)
    {
        final OneToOneRingBuffer ring = client.submitRing();
        final int notifyLength = notify == null ? 0 : notify.length;
        final int index = ring.tryClaim(RecordTypes.SUBMIT_BATCH, SubmitBatchFlyweight.bodyLength(entries,
            notifyLength));
        assertThat(index).as("room in the submit ring").isPositive();
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(ring.buffer(), index)
            .header(requestId, opcode, entries, segment, 0, System.nanoTime(),
                new UnsafeBuffer(notify == null ? new byte[0] : notify), 0, notifyLength);
        for (int i = 0; i < entries; i++)
        {
            final long[] e = entry.apply(i);
            batch.entry(i, e[0], e[1], e[2]);
        }
        ring.commit(index);
        client.ringDoorbell();
    }

    /**
     * A memfd mapped here and registered with the daemon through a raw session.
     */
    static final class Memory implements AutoCloseable
    {
        final MemorySegment segment;
        final long address;
        private final int fd;

        private Memory(final int fd, final MemorySegment segment)
        {
            this.fd = fd;
            this.segment = segment;
            this.address = segment.address();
        }

        static Memory register(final RawControlSession client, final long length)
        {
            final int fd = Memfd.createSealable("batch-test");
            Memfd.truncate(fd, length);
            Memfd.addSeals(fd, Memfd.SEAL_SHRINK);
            final Memory memory = new Memory(fd, MappedMemory.mapShared(fd, 0, length));
            final ControlFrame answer = client.request(frame -> frame.begin(ControlMessages.REGISTER_MEMORY)
                .putLong(ControlMessages.CORRELATION_ID, 1)
                .putLong(ControlMessages.REGISTER_ADDRESS, memory.address)
                .putLong(ControlMessages.REGISTER_LENGTH, length)
                .putLong(ControlMessages.REGISTER_FD_OFFSET, 0)
                .putString(ControlMessages.REGISTER_LOCATION, "cpu:0"), fd, WAIT);
            assertThat(answer.type()).as("registered").isEqualTo(ControlMessages.OK);
            return memory;
        }

        @Override
        public void close()
        {
            MappedMemory.unmap(segment);
            Memfd.close(fd);
        }
    }
}
