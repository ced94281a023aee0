package io.xferd.daemon.journal;

import io.xferd.daemon.journal.queue.JournalQueues;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The journal, single-threaded: what the data plane records comes out of the Chronicle Queue field for field, a
 * full ring drops and counts instead of waiting, and retention deletes the oldest cycle files.
 */
@Timeout(60)
class JournalTest
{
    @TempDir
    Path directory;

    private final CountersManager counters = new CountersManager(
        new UnsafeBuffer(new byte[64 * 1024]), new UnsafeBuffer(new byte[16 * 1024]));
    private final AtomicCounter dropped = counters.newCounter("journal dropped");
    private final AtomicCounter writeFailures = counters.newCounter("journal write failures");

    private JournalAppender appender()
    {
        return new JournalAppender(() -> JournalQueues.openForAppend(directory, "FAST_HOURLY"), writeFailures, 0);
    }

    @Test
    void shouldWriteEveryRecordTypeToTheQueueAndReadItBack()
    {
        final JournalRecorder recorder = new JournalRecorder(64 * 1024, dropped, new JournalNames());
        final TransferStats stats = new TransferStats();
        final JournalAgent agent = new JournalAgent(recorder, appender(), 0, stats, 0);
        final int peer = recorder.nameId("10.0.0.2:12001");
        final int nic = recorder.nameId("mlx5_0");
        assertThat(recorder.nameId("10.0.0.2:12001")).isEqualTo(peer);

        recorder.onSubmitted(3, 77, 0xabcL, Opcode.WRITE, 65536, 1_000, 1_500);
        recorder.onSliced(3, 77, 0xabcL, 2, 1_600);
        recorder.onSlice(3, 77, 0xabcL, 1, peer, nic, 32768, 1_700, 2_700, TransferStatus.OK);
        recorder.onCompleted(3, 77, 0xabcL, Opcode.WRITE, TransferStatus.OK, 65536, 65536, peer, nic, 1_000, 1_500,
            3_000);
        while (agent.doWork() > 0)
        {
            // drain
        }
        agent.onClose();

        final JournalReader reader = new JournalReader();
        final List<JournalEntry> entries = new ArrayList<>();
        assertThat(reader.read(directory, entries::add)).isEqualTo(4);
        assertThat(entries).extracting(JournalEntry::type).containsExactly(JournalRecordDescriptor.SUBMITTED,
            JournalRecordDescriptor.SLICED, JournalRecordDescriptor.SLICE, JournalRecordDescriptor.COMPLETED);
        assertThat(entries).allSatisfy(entry ->
        {
            assertThat(entry.requestId()).isEqualTo(77);
            assertThat(entry.traceId()).isEqualTo(0xabcL);
            assertThat(entry.clientSlot()).isEqualTo(3);
            // epoch offset: the monotonic timestamps land near now
            assertThat(Math.abs(entry.epochOffsetNanos() + System.nanoTime() - System.currentTimeMillis() * 1_000_000L))
                .isLessThan(60_000_000_000L);
        });
        assertThat(entries.get(0)).extracting(JournalEntry::opcode, JournalEntry::length, JournalEntry::submitNanos,
            JournalEntry::intakeNanos).containsExactly(Opcode.WRITE, 65536L, 1_000L, 1_500L);
        assertThat(entries.get(1).sliceCount()).isEqualTo(2);
        assertThat(entries.get(2)).extracting(JournalEntry::sliceIndex, JournalEntry::sentNanos, JournalEntry::ackNanos,
            JournalEntry::length).containsExactly(1, 1_700L, 2_700L, 32768L);
        final JournalEntry completed = entries.get(3);
        assertThat(completed).extracting(JournalEntry::status, JournalEntry::bytes, JournalEntry::completeNanos)
            .containsExactly(TransferStatus.OK, 65536L, 3_000L);
        assertThat(reader.name(completed.peerId())).isEqualTo("10.0.0.2:12001");
        assertThat(reader.name(completed.nicId())).isEqualTo("mlx5_0");
        assertThat(reader.name(TransferJournal.PEER_LOCAL)).isEqualTo("local");

        assertThat(stats.totals()).singleElement().extracting(TransferStats.Total::count, TransferStats.Total::bytes)
            .containsExactly(1L, 65536L);
        assertThat(stats.latencies()).singleElement()
            .satisfies(latency -> assertThat(latency.histogram().getMaxValue()).isBetween(1_990L, 2_010L));
        assertThat(dropped.get()).isZero();
    }

    @Test
    void shouldDropAndCountInsteadOfWaitingWhenTheRingIsFull()
    {
        final JournalRecorder recorder = new JournalRecorder(4096, dropped, new JournalNames());
        final int events = 1000;
        final long start = System.nanoTime();
        for (int i = 0; i < events; i++)
        {
            recorder.onCompleted(0, i, 0, Opcode.READ, TransferStatus.OK, 64, 64, 0, 1, 0, 1, 2);
        }
        assertThat(System.nanoTime() - start).as("never waits for the consumer").isLessThan(2_000_000_000L);

        final JournalAgent agent = new JournalAgent(recorder, null, 0, null, 0);
        final List<Long> kept = new ArrayList<>();
        recorder.ring().read((type, buffer, index, length) -> kept.add(buffer.getLong(index)), Integer.MAX_VALUE);
        assertThat(kept).isNotEmpty().hasSizeLessThan(events);
        assertThat(dropped.get()).isEqualTo(events - kept.size());
        // the oldest records stay, the ones that found the ring full are the ones lost
        assertThat(kept.getFirst()).isZero();
        agent.onClose();
    }

    @Test
    void shouldDrainABacklogThatWrapsTheRingInOneCycle()
    {
        // a short read is a short batch to the idle strategy (a nap): a backlog that wraps must not look like one
        final JournalRecorder recorder = new JournalRecorder(64 * 1024, dropped, new JournalNames());
        final JournalAgent agent = new JournalAgent(recorder, null, 0, null, 0);
        final int backlog = 500; // of the ring's ~680 completion records: the second backlog crosses its end
        for (int round = 0; round < 2; round++)
        {
            for (int i = 0; i < backlog; i++)
            {
                recorder.onCompleted(0, i, 0, Opcode.READ, TransferStatus.OK, 64, 64, 0, 1, 0, 1, 2);
            }
            assertThat(agent.doWork()).as("round %d", round).isEqualTo(backlog);
        }
        assertThat(dropped.get()).isZero();
        agent.onClose();
    }

    @Test
    void shouldDeleteTheOldestCycleFilesBeyondTheRetention() throws Exception
    {
        final JournalRecorder recorder = new JournalRecorder(4096, dropped, new JournalNames());
        final JournalAgent agent = new JournalAgent(recorder, appender(), 1, null, 0);
        recorder.onSubmitted(0, 1, 0, Opcode.READ, 64, 1, 2);
        agent.doWork(); // the current cycle's file exists now
        for (final String old : List.of("20200101-00F.cq4", "20200101-01F.cq4", "20200101-02F.cq4"))
        {
            Files.createFile(directory.resolve(old));
        }

        assertThat(agent.enforceRetention()).isEqualTo(3);

        try (Stream<Path> files = Files.list(directory))
        {
            assertThat(files.map(path -> path.getFileName().toString()).filter(name -> name.endsWith(".cq4")))
                .singleElement().matches(name -> !name.startsWith("2020"));
        }
        recorder.onSubmitted(0, 2, 0, Opcode.READ, 64, 1, 2);
        agent.doWork();
        agent.onClose();
        final List<JournalEntry> entries = new ArrayList<>();
        new JournalReader().read(directory, entries::add);
        assertThat(entries).extracting(JournalEntry::requestId).containsExactly(1L, 2L);
    }

    @Test
    void shouldWriteWhatWasRecordedBeforeTheQueueWasOpen() throws Exception
    {
        final JournalRecorder recorder = new JournalRecorder(64 * 1024, dropped, new JournalNames());
        final TransferStats stats = new TransferStats();
        final JournalAgent agent = new JournalAgent(recorder, this::appender, writeFailures, 0, stats, -1);
        // the data plane serves (and records) before the journal's thread has opened the queue
        recorder.onSubmitted(1, 5, 0, Opcode.WRITE, 4096, 10, 20);
        recorder.onCompleted(1, 5, 0, Opcode.WRITE, TransferStatus.OK, 4096, 4096, TransferJournal.PEER_LOCAL, 0, 10,
            20, 30);
        assertThat(agent.isOpen()).isFalse();
        try (Stream<Path> files = Files.list(directory))
        {
            assertThat(files).as("no queue before onStart").isEmpty();
        }

        agent.onStart();
        assertThat(agent.isOpen()).isTrue();
        while (agent.doWork() > 0)
        {
            // drain
        }
        agent.onClose();

        final List<JournalEntry> entries = new ArrayList<>();
        new JournalReader().read(directory, entries::add);
        assertThat(entries).extracting(JournalEntry::type, JournalEntry::requestId).containsExactly(
            org.assertj.core.groups.Tuple.tuple(JournalRecordDescriptor.SUBMITTED, 5L),
            org.assertj.core.groups.Tuple.tuple(JournalRecordDescriptor.COMPLETED, 5L));
        assertThat(dropped.get()).isZero();
        assertThat(writeFailures.get()).isZero();
        assertThat(stats.totals()).singleElement().extracting(TransferStats.Total::count).isEqualTo(1L);
    }

    @Test
    void shouldCountEveryRecordAsNotWrittenAndKeepTheMetricsWhenTheQueueCannotBeOpened()
    {
        final JournalRecorder recorder = new JournalRecorder(64 * 1024, dropped, new JournalNames());
        final TransferStats stats = new TransferStats();
        final JournalAgent agent = new JournalAgent(recorder, () ->
        {
            throw new IllegalStateException("read-only file system");
        }, writeFailures, 0, stats, -1);
        recorder.onSubmitted(1, 5, 0, Opcode.WRITE, 4096, 10, 20);

        agent.onStart();
        recorder.onCompleted(1, 5, 0, Opcode.WRITE, TransferStatus.OK, 4096, 4096, TransferJournal.PEER_LOCAL, 0, 10,
            20, 30);
        while (agent.doWork() > 0)
        {
            // drain
        }
        agent.onClose();

        assertThat(agent.isOpen()).isFalse();
        assertThat(writeFailures.get()).isEqualTo(2);
        assertThat(stats.totals()).singleElement().extracting(TransferStats.Total::count).isEqualTo(1L);
    }
}
